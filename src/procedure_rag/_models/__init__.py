"""Models the index depends on: the offline embedders and the record of which model built an index."""
