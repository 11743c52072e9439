"""Dev sets for duplicate-fact merging (see `paraphrases.py`)."""
