"""Cached keys and values: a document's across requests (`doc_cache`), a batch's within a run (`batch_kv`),
and the anchored family's rows (`anchored_kv`), kept in the dtype `kv_dtype` picks."""
