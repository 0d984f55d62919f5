"""The ``tenantnet`` command."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from .api import Progress, run
from .errors import ScenarioError
from .results import Results
from .scenario import Scenario

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Simulate how a datacenter network is shared among tenants.",
)


def _add_qshare() -> None:
    from .qshare_cli import app as qshare_app
    app.add_typer(qshare_app, name="qshare")


_add_qshare()


def _fail(err: ScenarioError) -> typer.Exit:
    typer.echo(f"error: {err}", err=True)
    return typer.Exit(code=2)


class _Bar:
    """A progress bar of simulated time on a terminal (nothing when not a TTY)."""

    def __init__(self, label: str, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.label = label
        self.started = time.monotonic()

    def __enter__(self) -> Progress | None:
        if not self.enabled:
            return None
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(bar_width=24),
            TextColumn("{task.fields[sim]}"), TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task(self.label, total=1.0, sim="", rate="")

        def update(now: float, end: float, events: int) -> None:
            wall = max(time.monotonic() - self.started, 1e-9)
            self.progress.update(
                self.task, completed=now / end if end else 1.0,
                sim=f"{now * 1e3:.1f}/{end * 1e3:.1f} ms",
                rate=f"{events / wall / 1e6:.1f} Mev/s")
        return update

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.stop()


def _run(scenario: Scenario, label: str, quiet: bool) -> Results:
    with _Bar(label, not quiet) as progress:
        return run(scenario, progress=progress)


@app.command("run")
def run_cmd(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the results.")],
    seed: Annotated[int | None, typer.Option(help="Override simulation.seed.")] = None,
    report: Annotated[bool, typer.Option(help="Also write report.html.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run SCENARIO and write flows/throughput/queues/links Parquet files and summary.json."""
    try:
        sc = Scenario.from_file(scenario)
        if seed is not None:
            sc = sc.with_overrides(simulation={"seed": seed})
        res = _run(sc, scenario.name, quiet)
    except ScenarioError as e:
        raise _fail(e) from None
    res.write(out)
    if report:
        from .report import write_report
        write_report({res.summary["scenario"]: res}, out / "report.html",
                     f"tenantnet: {res.summary['scenario']}")
    s = res.summary
    typer.echo(f"{s['scenario']}: {s['simulated_s'] * 1e3:.3f} ms simulated in {s['wall_s']:.2f} s "
               f"({s['events'] / max(s['wall_s'], 1e-9) / 1e6:.1f} M events/s); results in {out}/")


@app.command()
def validate(scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")]) -> None:
    """Check SCENARIO without running it."""
    try:
        Scenario.from_file(scenario).validate()
    except ScenarioError as e:
        raise _fail(e) from None
    typer.echo(f"{scenario}: ok")


@app.command()
def schema() -> None:
    """Print the JSON Schema of the scenario format."""
    from .scenario import schema as get
    typer.echo(json.dumps(get(), indent=2))


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")] = Path(
        "tenantnet-out"),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run the built-in two-tenant demo and write an HTML report to OUT/report.html."""
    from .demo import run_demo
    path = run_demo(out, quiet=quiet, runner=_run)
    typer.echo(f"report: {path}")


@app.command()
def report(
    results: Annotated[Path, typer.Argument(help="A folder `tenantnet run` wrote.")],
) -> None:
    """(Re)write RESULTS/report.html from a results folder."""
    from .report import write_report
    res = Results.read(results)
    path = write_report({res.summary["scenario"]: res}, results / "report.html",
                        f"tenantnet: {res.summary['scenario']}")
    typer.echo(f"report: {path}")


@app.command()
def reproduce(
    name: Annotated[str, typer.Argument(help="Which result, e.g. barberq-fig2.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")],
) -> None:
    """Reproduce a paper's result: write its plot (PNG) and data (CSV) into OUT."""
    from .reproduce import REPRODUCTIONS
    if name not in REPRODUCTIONS:
        known = ", ".join(sorted(REPRODUCTIONS))
        typer.echo(f"error: unknown reproduction {name!r}; expected one of {known}", err=True)
        raise typer.Exit(code=2)
    title, fn = REPRODUCTIONS[name]
    typer.echo(f"{name}: {title}")
    for path in fn(out):
        typer.echo(f"wrote {path}")


BENCHMARKS = {
    "permutation": "htsim's DCTCP permutation, fat-tree k=12, FIFO ports",
    "permutation-dwrr8": "the same with 8 DWRR queues and BarberQ on every switch port",
    "qshare-place": "QShare placement time per tenant, k=16 fat-tree filled to full load",
}


def _bench_qshare(repeat: int) -> None:
    import numpy as np

    from .reproduce.qshare import filled
    for i in range(repeat):
        for r in (1, 4, 16):
            t0 = time.perf_counter()
            _, f = filled(r, seed=1 + i)
            ns = np.array(f["place_ns"], dtype=float)
            typer.echo(json.dumps({
                "benchmark": "qshare-place", "oversubscription": f"{r}:1",
                "tenants": f["admitted"], "rejected": f["rejected"],
                "mean_ms": round(ns.mean() / 1e6, 4),
                "p99_ms": round(np.quantile(ns, 0.99) / 1e6, 4),
                "max_ms": round(ns.max() / 1e6, 4),
                "fill_wall_s": round(time.perf_counter() - t0, 2),
            }))


@app.command()
def bench(
    name: Annotated[str, typer.Argument(
        help="Benchmark: permutation, permutation-dwrr8 or qshare-place.")] = "permutation",
    repeat: Annotated[int, typer.Option(help="Runs; one JSON line each.")] = 1,
) -> None:
    """Run a benchmark scenario and print one JSON line per run."""
    if name not in BENCHMARKS:
        typer.echo(f"error: unknown benchmark {name!r}; expected one of {', '.join(BENCHMARKS)}",
                   err=True)
        raise typer.Exit(code=2)
    if name == "qshare-place":
        _bench_qshare(repeat)
        return
    sc = Scenario.builtin(name)
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = run(sc)
        wall = time.perf_counter() - t0
        s = res.summary
        line = {
            "benchmark": name,
            "wall_s": round(wall, 3),
            "events": s["events"],
            "events_per_s": round(s["events"] / wall),
            "data_packets": s["data_packets_sent"],
            "ns_per_data_packet": round(wall / max(s["data_packets_sent"], 1) * 1e9, 1),
            "mean_flow_gbps": round(float(res.flow_gbps().mean()), 4),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "drops": s["packets_dropped"],
            "evictions": s["packets_evicted"],
            "version": s["tenantnet_version"],
        }
        typer.echo(json.dumps(line))


def main() -> None:
    """Entry point of the ``tenantnet`` script."""
    app()


if __name__ == "__main__":
    main()
