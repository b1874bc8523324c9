"""Type stubs of the native module (see chattygraph/__init__.py for the public API)."""

from typing import Any, Optional, Union

import numpy as np

class Graph:
    @staticmethod
    def from_arrays(
        src: np.ndarray,
        dst: np.ndarray,
        n: int,
        directed: bool,
        weights: Optional[np.ndarray] = None,
        weight_type: str = "int",
        dedup: bool = False,
        drop_self_loops: bool = False,
    ) -> "Graph": ...
    @staticmethod
    def read(
        path: str,
        format: Optional[str] = None,
        symmetrize: bool = False,
        dedup: bool = False,
        drop_self_loops: bool = False,
        mem_budget: Optional[int] = None,
        keep_id_range: bool = False,
        header: Optional[bool] = None,
    ) -> "Graph": ...
    def write(self, path: str, layout: Optional[str] = None, stripes: int = 1) -> None: ...
    @property
    def n(self) -> int: ...
    @property
    def m(self) -> int: ...
    @property
    def directed(self) -> bool: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def weight_type(self) -> str: ...
    @property
    def id_base(self) -> int: ...
    @property
    def names(self) -> Optional[list[Union[int, str]]]: ...
    def csr(self) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray], bool]: ...
    def sinks_first(self, labels: np.ndarray) -> np.ndarray: ...
    def tight_sources(self, dist: np.ndarray, hops: bool) -> tuple[np.ndarray, np.ndarray]: ...
    def bfs_tree_edges(
        self,
        source: int,
        depths: np.ndarray,
        limit: int,
        offsets: Optional[np.ndarray] = None,
        targets: Optional[np.ndarray] = None,
    ) -> tuple[np.ndarray, np.ndarray]: ...

def run(
    graph: Graph,
    algorithm_name: str,
    engine: str = "auto",
    threads: Optional[int] = None,
    source: Optional[int] = None,
    seed: Optional[int] = None,
    delta: Optional[float] = None,
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    personalization: Optional[np.ndarray] = None,
    sources: Union[None, int, str, np.ndarray] = None,
    x: Optional[np.ndarray] = None,
    top: int = 10,
    parents: bool = False,
    katz_alpha: float = 0.1,
    katz_beta: float = 1.0,
    normalized: bool = True,
    degree: str = "total",
    wf_improved: bool = True,
    resolution: float = 1.0,
    threshold: float = 1e-7,
    max_level: Optional[int] = None,
    weighted: bool = False,
) -> tuple[np.ndarray, dict[str, Any], Optional[np.ndarray]]: ...
def gpu_count() -> int: ...
def edges_from_adjacency(
    adj: dict[Any, dict[Any, dict[str, Any]]], index: Optional[dict[Any, int]], weight: Optional[str] = None, default: float = 1.0
) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray], bool]: ...
