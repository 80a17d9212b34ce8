// The embedded engine's server configuration, given when chdb opens the data directory (these are server
// settings, not query settings: a SET cannot change them). ClickHouse sizes its caches for a server (5 GB of
// marks, 5 GB of primary index, 2 GB of text index postings, 1 GB of text index tokens, 128 MB of compiled
// expressions…); a local store read by one user needs a small fraction, and a backfill none of it, so each is bounded
// here; two merge threads, one a core. A name the engine does not know is ignored without a word (the tokens cache was
// named for a dictionary-block cache this engine does not have, and stayed at 1 GB): engine-args.test.ts checks each.
const MB = 1 << 20;

export const ENGINE_ARGS = [
  `--mark_cache_size=${64 * MB}`,
  `--index_mark_cache_size=${32 * MB}`,
  `--primary_index_cache_size=${32 * MB}`,
  `--text_index_header_cache_size=${16 * MB}`,
  `--text_index_postings_cache_size=${32 * MB}`,
  `--text_index_tokens_cache_size=${32 * MB}`,
  `--compiled_expression_cache_size=${16 * MB}`,
  `--query_condition_cache_size=${16 * MB}`,
  '--background_pool_size=2',
];
