"""Human review: samples to rate, ratings (never overwriting judgments), judge-human agreement, retirement."""
