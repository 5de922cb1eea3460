"""Reading: every source format becomes layout elements; ``registry`` picks the reader."""
