"""The survey's classic models (Madougou et al. 2016, the survey seed).

Each module here defines and registers one or more :class:`kerncast.models.Predictor`;
:data:`kerncast.models.registry.BUILTIN` names the module of each, which is imported
when its model is first asked for.
"""
