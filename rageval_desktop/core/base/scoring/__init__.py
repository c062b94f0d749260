"""Pure scoring (no project, no I/O): how nugget assignments, citation support and UMBRELA grades become scores,
as open-rag-eval computes them."""
