"""Retrieval stages: BM25, dense, fusion and rerank, each a `Retriever` returning a `StageOutput`.

Every stage ranks by trec_eval's rule (score descending, ties by docid
descending), so the same inputs always give the same run. Heavy
dependencies (torch, sentence-transformers) are imported only when a dense
or rerank component is constructed; they come with the ``dense`` extra.
"""

from rankproof._errors import MissingExtraError
from rankproof.retrieval._base import (
    Docs,
    Retriever,
    StageOutput,
    default_cache_dir,
    docs_digest,
    retrieved_nothing,
)
from rankproof.retrieval._bm25 import BM25Retriever
from rankproof.retrieval._dense import (
    DENSE_INDEXES,
    DenseRetriever,
    check_dense_index,
    exact_search,
)
from rankproof.retrieval._embed import (
    HASHING_NOTE,
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    build_embedder,
)
from rankproof.retrieval._embed_cache import EmbedStats, embedder_spec
from rankproof.retrieval._embed_model import (
    ModelIdentity,
    embed_model_problem,
    model_identity,
    resolve_embed_model,
)
from rankproof.retrieval._fusion import FusionRetriever, fuse
from rankproof.retrieval._fusion_methods import FusionMethod, Norm, default_norm
from rankproof.retrieval._fusion_optimize import (
    FoldChoice,
    FusionOptimization,
    FusionParams,
    FusionSearch,
    optimize_fusion,
)
from rankproof.retrieval._query import (
    QUERY_REWRITE_PROMPT,
    QUERY_STOP_WORDS,
    QueryTransform,
    RewrittenQueries,
    TransformedQueries,
    get_query_transform,
    query_transforms,
    register_query_transform,
    rewrite_config_hash,
    rewrite_queries,
    transform_queries,
)
from rankproof.retrieval._rerank import (
    PLUMBING_NOTE,
    CrossEncoder,
    RerankRetriever,
    SentenceTransformerCrossEncoder,
    rerank_unavailable_reason,
)
from rankproof.retrieval._search import block_search
from rankproof.retrieval._served import ServedEmbedder
from rankproof.retrieval._testing import make_plumbing_cross_encoder
from rankproof.retrieval._timing import (
    DEFAULT_THREADS,
    DEFAULT_WARMUP,
    TimedSearch,
    TimingStamp,
    machine_load,
    over_capacity,
    peak_load,
    timed_search,
    torch_threads,
)

__all__ = [
    "DEFAULT_THREADS",
    "DEFAULT_WARMUP",
    "DENSE_INDEXES",
    "HASHING_NOTE",
    "PLUMBING_NOTE",
    "QUERY_REWRITE_PROMPT",
    "QUERY_STOP_WORDS",
    "BM25Retriever",
    "CrossEncoder",
    "DenseRetriever",
    "Docs",
    "EmbedStats",
    "Embedder",
    "FoldChoice",
    "FusionMethod",
    "FusionOptimization",
    "FusionParams",
    "FusionRetriever",
    "FusionSearch",
    "HashingEmbedder",
    "MissingExtraError",
    "ModelIdentity",
    "Norm",
    "QueryTransform",
    "RerankRetriever",
    "Retriever",
    "RewrittenQueries",
    "SentenceTransformerCrossEncoder",
    "SentenceTransformerEmbedder",
    "ServedEmbedder",
    "StageOutput",
    "TimedSearch",
    "TimingStamp",
    "TransformedQueries",
    "block_search",
    "build_embedder",
    "check_dense_index",
    "default_cache_dir",
    "default_norm",
    "docs_digest",
    "embed_model_problem",
    "embedder_spec",
    "exact_search",
    "fuse",
    "get_query_transform",
    "machine_load",
    "make_plumbing_cross_encoder",
    "model_identity",
    "optimize_fusion",
    "over_capacity",
    "peak_load",
    "query_transforms",
    "register_query_transform",
    "rerank_unavailable_reason",
    "resolve_embed_model",
    "retrieved_nothing",
    "rewrite_config_hash",
    "rewrite_queries",
    "timed_search",
    "torch_threads",
    "transform_queries",
]
