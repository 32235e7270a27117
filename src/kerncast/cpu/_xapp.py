"""XAPP (Ardalani et al., MICRO 2015; ``../shared/seeds/xapp-cpu-code-to-gpu-speedup.txt``):
predict the GPU speedup of a CPU region from its microarchitecture-independent features.

The learning side, in the seed's order:

* :func:`speedup_dataset`: the training table of one platform (Fig. 2 step 1), the 39
  features of every corpus C region joined with its CPU and GPU times;
* :func:`mean_relative_error`, :func:`weighted_error`, :func:`data_bounds`: the seed's
  metrics (section 5.2, Table 4);
* :func:`fit_baseline`: the intermediate OLS, weighted OLS and LASSO models (section 5.1);
* :class:`PublishedModel`: the final model, 4 features with all interactions, found by
  the two-stage search with repeated random sub-sampling (sections 3.3 and 5.2), via
  :func:`search_feature_sets`;
* :class:`KerncastModel` and :class:`PortClassifier`: kerncast's own model (log
  response, regularised interactions or boosting, with an interval and an explanation)
  and the port/no-port decision.

Every fitted model has ``to_dict()`` / ``from_dict()`` (JSON-ready data).
"""

from __future__ import annotations

from kerncast.cpu._xapp_baselines import BASELINES, Baseline, fit_baseline
from kerncast.cpu._xapp_data import (
    DEVICES,
    FEATURES_PATH,
    VARIANTS,
    LabelReport,
    feature_matrix,
    load_features,
    speedup_dataset,
    speedup_labels,
)
from kerncast.cpu._xapp_metrics import (
    PAPER_BOUNDS,
    PAPER_WEIGHTS,
    data_bounds,
    mean_relative_error,
    relative_errors,
    weighted_error,
)
from kerncast.cpu._xapp_own import CANDIDATES, KerncastModel, PortClassifier, grouped_folds
from kerncast.cpu._xapp_published import PublishedModel
from kerncast.cpu._xapp_search import (
    RESPONSES,
    MinMax,
    SearchResult,
    cv_errors,
    group_splits,
    interaction_names,
    interaction_terms,
    search_feature_sets,
)

__all__ = [
    "BASELINES",
    "CANDIDATES",
    "DEVICES",
    "FEATURES_PATH",
    "PAPER_BOUNDS",
    "PAPER_WEIGHTS",
    "RESPONSES",
    "VARIANTS",
    "Baseline",
    "KerncastModel",
    "LabelReport",
    "MinMax",
    "PortClassifier",
    "PublishedModel",
    "SearchResult",
    "cv_errors",
    "data_bounds",
    "feature_matrix",
    "fit_baseline",
    "group_splits",
    "grouped_folds",
    "interaction_names",
    "interaction_terms",
    "load_features",
    "mean_relative_error",
    "relative_errors",
    "search_feature_sets",
    "speedup_dataset",
    "speedup_labels",
    "weighted_error",
]
