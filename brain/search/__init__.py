"""Search: text analysis, BM25 (+ vector) search over an index store, and documents loaded into it."""

from brain.search.documents import LoadResult, load_document, split_document
from brain.search.index import Hit, IndexedDoc, SearchIndex

__all__ = ["Hit", "IndexedDoc", "LoadResult", "SearchIndex", "load_document", "split_document"]
