"""Type stubs of the extension module (python/src); the documented API is molattn's."""

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

__version__: str

def cli(argv: Sequence[str]) -> None: ...
def featurize(
    smiles: Optional[Sequence[str]] = None,
    *,
    path: Optional[str] = None,
    model: str = "mat",
    coords: Optional[str] = None,
    seed: int = 0,
    cache: Optional[str] = None,
    no_cache: bool = False,
    max_atoms: Optional[int] = None,
    run: Optional[str] = None,
    smiles_column: str = "smiles",
    delimiter: str = ",",
    id_field: Optional[str] = None,
) -> tuple[dict[str, np.ndarray], list[tuple[int, str]]]: ...

class Run:
    @staticmethod
    def load(path: str, device: str = "flex") -> Run: ...
    @property
    def path(self) -> Path: ...
    @property
    def kind(self) -> str: ...
    @property
    def tasks(self) -> list[str]: ...
    @property
    def members(self) -> int: ...
    @property
    def device(self) -> str: ...
    def predict(
        self,
        smiles: Optional[Sequence[str]] = None,
        *,
        path: Optional[str] = None,
        smiles_column: str = "smiles",
        delimiter: str = ",",
        id_field: Optional[str] = None,
        cache: Optional[str] = None,
        no_cache: bool = False,
        max_atoms: Optional[int] = None,
        members: bool = False,
        mc_dropout: Optional[int] = None,
        seed: int = 0,
        chunk_rows: int = 1024,
    ) -> dict[str, Any]: ...
    def embed(
        self,
        smiles: Optional[Sequence[str]] = None,
        *,
        path: Optional[str] = None,
        smiles_column: str = "smiles",
        delimiter: str = ",",
        id_field: Optional[str] = None,
        cache: Optional[str] = None,
        no_cache: bool = False,
        max_atoms: Optional[int] = None,
        atoms: bool = False,
        member: int = 0,
    ) -> dict[str, Any]: ...
    def explain(self, smiles: str, *, out: Optional[str] = None, layer: Optional[int] = None, head: Optional[int] = None) -> dict[str, Any]: ...
    def export_onnx(self, out: str) -> None: ...
    def generate(self, n: int = 1000, **kwargs: Any) -> list[dict[str, Any]]: ...
