"""Chunking: layout elements become sections, units, blocks, then child and parent chunks."""
