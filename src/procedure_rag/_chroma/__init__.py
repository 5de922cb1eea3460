"""The default index on Chroma: the collection layout, and the framework-free index over it."""
