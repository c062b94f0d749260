"""The ground floor: what every floor of core uses — errors, paths, text neutralising, the vocabulary of metrics,
kinds and defaults, the task context, the rate limiter, statistics and the pure scoring of nuggets, citations and
UMBRELA grades. Imports nothing else of the app."""
