"""TensorBoard event files under ``RUN_DIR/tensorboard/`` (torch's ``SummaryWriter``).

The payoff heatmap and the meta-strategy bar chart are drawn in a child process
(:mod:`light_league.tracking.chart_process`): ``log_payoff`` writes the table and the scalars at
once and returns; the images are written when they are ready (every generation's, at the latest
in ``close``). The child uses at most a quarter of one core, so when generations come faster than
that, their images follow later and run end draws the rest at full speed.
``RUN_DIR/tensorboard/charts_written.txt`` lists the generations whose images are on disk, so a
run resumed after a kill draws every finished generation's images that were lost (from
``payoff/gen_XXXX.json``). It is replaced whole at each change (never appended to in place), so a
second hard link to it (a ``cp -al`` backup) is never written through.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from torch.utils.tensorboard import SummaryWriter

from light_league.tracking.chart_process import ChartRenderer, RenderedCharts, draw_charts
from light_league.tracking.headline import CLOSED, Chart, custom_scalars_layout
from light_league.tracking.logger import (
    CONFIG_TAG,
    INTERRUPTED_CLOSE_S,
    META_STRATEGY_TAG,
    PAYOFF_HEATMAP_TAG,
    PAYOFF_TABLE_TAG,
    MetricLogger,
    PayoffSnapshot,
    resolved_config_markdown,
)
from light_league.tracking.payoff_render import payoff_text
from light_league.utils.atomic import atomic_write_text

#: the generations whose chart images are written and flushed, one a line (in the log dir)
CHARTS_WRITTEN_FILE = "charts_written.txt"
_CHART_TAGS = {"payoff_heatmap": PAYOFF_HEATMAP_TAG, "meta_strategy": META_STRATEGY_TAG}
#: the Custom Scalars plugin's layout tag
LAYOUT_TAG = "custom_scalars__config__"


def _layout_summary(layout: dict[str, list[Chart]]) -> Summary:
    """The Custom Scalars layout as a summary: the headline categories open, ``CLOSED`` closed."""
    categories = []
    for title, charts in layout.items():
        protos = []
        for name, kind, tags in charts:
            if kind == "margin":
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                protos.append(
                    layout_pb2.Chart(title=name, margin=layout_pb2.MarginChartContent(series=[series]))
                )
            else:
                protos.append(
                    layout_pb2.Chart(title=name, multiline=layout_pb2.MultilineChartContent(tag=tags))
                )
        categories.append(layout_pb2.Category(title=title, chart=protos, closed=title in CLOSED))
    tensor = TensorProto(
        dtype="DT_STRING",
        string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
        tensor_shape=TensorShapeProto(),
    )
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(value=[Summary.Value(tag=LAYOUT_TAG, tensor=tensor, metadata=metadata)])


class TensorBoardLogger(MetricLogger):
    """Scalars, payoff heatmaps, payoff markdown tables and meta-strategy bar charts for TensorBoard.

    ``purge_step`` (set on resume) hides every event at or after that step left by the run that
    was interrupted, so the resumed generations replace them instead of doubling them.
    ``background_charts`` false draws the images inside ``log_payoff`` (the caller waits).
    """

    def __init__(
        self,
        log_dir: Path,
        *,
        flush_secs: int = 30,
        max_queue: int = 100,
        purge_step: int | None = None,
        background_charts: bool = True,
    ) -> None:
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # A fresh run also starts with a session-start event (purge_step=0): TensorBoard's loader
        # treats only a *second* start as a restart, so without it a resume would purge nothing.
        self._writer = SummaryWriter(
            log_dir=str(self.log_dir),
            purge_step=0 if purge_step is None else purge_step,
            flush_secs=flush_secs,
            max_queue=max_queue,
        )
        self._keys: set[str] = set()
        self._layout: dict[str, list[Chart]] = {}
        self._charts_written = self.log_dir / CHARTS_WRITTEN_FILE
        #: the file's lines (generations whose images are written), in the order they were written
        self._written: list[str] = (
            self._charts_written.read_text(encoding="utf-8").split() if self._charts_written.is_file() else []
        )
        self._charts = ChartRenderer(self._write_charts) if background_charts else None
        if self._charts is not None:
            self._charts.start()  # its imports overlap the run's start, not its first generations
        if purge_step:
            self._redraw_lost_charts(purge_step)

    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        for key, value in metrics.items():
            self._writer.add_scalar(key, float(value), global_step=step)
        self._keys.update(metrics)
        layout = custom_scalars_layout(self._keys)
        if layout != self._layout:  # a chart got its first data: the dashboard shows the newest layout
            self._writer._get_file_writer().add_summary(_layout_summary(layout), step)
            self._layout = layout

    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        step = snapshot.generation
        self._writer.add_text(PAYOFF_TABLE_TAG, payoff_text(snapshot), step)
        if self._charts is not None:
            self._charts.submit(snapshot)
        else:
            self._write_charts(draw_charts(snapshot))

    def _write_charts(self, rendered: RenderedCharts) -> None:
        """Write both images (PNG already encoded) at their generation, flush, note it as written."""
        writer = self._writer._get_file_writer()  # add_image would decode and encode the PNG again
        for name, chart in rendered.charts.items():
            image = Summary.Image(
                height=chart.height, width=chart.width, colorspace=3, encoded_image_string=chart.png
            )
            summary = Summary(value=[Summary.Value(tag=_CHART_TAGS[name], image=image)])
            writer.add_summary(summary, rendered.generation)
        writer.flush()
        self._written.append(str(rendered.generation))
        atomic_write_text(self._charts_written, "".join(f"{g}\n" for g in self._written))

    def _redraw_lost_charts(self, resumed_at: int) -> None:
        """On resume: draw again the images of every generation before ``resumed_at`` that a kill
        lost (those whose payoff file is saved), oldest first, in the background."""
        from light_league.errors import CorruptFileError
        from light_league.tracking.report import load_payoff_snapshot, payoff_path

        written = set(self._written)
        run_dir = self.log_dir.parent
        for generation in range(resumed_at):
            if str(generation) in written or not payoff_path(run_dir, generation).exists():
                continue
            try:
                snapshot = load_payoff_snapshot(run_dir, generation)
            except (CorruptFileError, OSError):
                continue
            if self._charts is not None:
                self._charts.submit(snapshot)
            else:
                self._write_charts(draw_charts(snapshot))

    def wait_for_charts(self, timeout_s: float = 300.0) -> bool:
        """Draw the images of every generation logged so far now and wait for them (tests, tools:
        the run itself never waits, see the module docstring)."""
        return True if self._charts is None else self._charts.wait(timeout_s)

    @property
    def charts(self) -> ChartRenderer | None:
        """The background chart renderer (None when charts are drawn in ``log_payoff``)."""
        return self._charts

    def log_text(self, tag: str, text: str, step: int) -> None:
        self._writer.add_text(tag, text, step)

    def log_config(self, resolved: dict[str, Any]) -> None:
        self._writer.add_text(CONFIG_TAG, resolved_config_markdown(resolved), 0)

    def flush(self) -> None:
        self._writer.flush()

    def interrupt(self) -> None:
        """The charts still being drawn get :data:`INTERRUPTED_CLOSE_S`; the rest are skipped."""
        if self._charts is not None:
            self._charts.close(INTERRUPTED_CLOSE_S, quiet=True)

    def close(self) -> None:
        """Wait for the images still being drawn, write them, then close the event file."""
        try:
            if self._charts is not None:
                self._charts.close()
        finally:
            self._writer.close()
