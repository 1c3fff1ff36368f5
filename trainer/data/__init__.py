"""Dataset rows (``docs/dataset-format.md``): reading and validating them, rendering them to the
exact training text, tokenizing them, and arranging them into batches."""
