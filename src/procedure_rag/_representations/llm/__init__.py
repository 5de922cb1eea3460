"""Model-backed representations: the generator, its prompts, and parsing what a model wrote."""
