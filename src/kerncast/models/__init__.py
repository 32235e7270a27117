"""kerncast.models: see DESIGN.md for this layer's place in the pipeline."""
