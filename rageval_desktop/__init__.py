"""RAGEval Desktop: human-in-the-loop evaluation of RAG systems, in one local project file."""

__version__ = "0.2.0"
