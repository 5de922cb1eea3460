"""Search representations of a raw chunk: value types, cache, offline and model-backed generators."""
