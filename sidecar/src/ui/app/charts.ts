// Time series per UTC day drawn with uPlot (canvas: thousands of points stay cheap to draw and redraw). A few
// days are groups of bars on an axis of exactly those days; a longer span is lines. Each chart is as wide as its card.
import uPlot from 'uplot';
import { h } from './dom.js';

export interface Line {
  label: string;
  values: (number | null)[];
  color: string;
  /** Percent series go on their own right-hand axis. */
  percent?: boolean;
}

const COLORS = ['#2f6fde', '#e2703a', '#3a9e5c', '#9b59b6', '#c0392b', '#16a085', '#7f8c8d', '#d4ac0d'];
export const color = (index: number): string => COLORS[index % COLORS.length];

const compactFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const compact = (value: number): string => compactFormat.format(value);

const DAY = 86_400;
/** Over a span of up to this many days, a day is a group of bars (a line through one or two points says little). */
const BAR_DAYS = 14;
/** The share of a day its group of bars takes. */
const GROUP = 0.8;
/** Room a day's label needs on the axis, in CSS pixels. */
const LABEL_PX = 48;
const HEIGHT = 200;
/** The card's padding on either side (style.css `.chart`). */
const PADDING = 16;

const day = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

/** Series `index` of `count` as bars beside the others of its day (uPlot places them by their left edge, in seconds). */
function groupedBars(days: number[], index: number, count: number): uPlot.Series.PathBuilder {
  const width = (GROUP * DAY) / count;
  const lefts = days.map((seconds) => seconds - (GROUP * DAY) / 2 + index * width);
  const widths = days.map(() => width);
  const scaleValue = 1 as uPlot.Series.BarsPathBuilderFacetUnit; // a const enum, which the bundler cannot inline
  return uPlot.paths.bars!({
    disp: {
      x0: { unit: scaleValue, values: () => lefts },
      size: { unit: scaleValue, values: () => widths },
    },
  });
}

export function timeChart(title: string, days: number[], lines: Line[]): { element: HTMLElement; plot?: uPlot } {
  const element = h('figure', { class: 'chart', 'data-chart': title }, h('figcaption', {}, title));
  if (days.length === 0 || lines.length === 0) {
    element.append(h('p', { class: 'empty' }, 'no data in this range'));
    return { element };
  }
  const hasPercent = lines.some((line) => line.percent);
  const spanDays = (days[days.length - 1] - days[0]) / DAY + 1;
  const bars = spanDays <= BAR_DAYS;
  // uPlot's own range for a time axis around one point spans years: the axis covers the days shown, and half a day either side of bars.
  const margin = bars ? DAY / 2 : 0;
  const first = days[0] - margin;
  const last = days[days.length - 1] + margin;
  const fromZero = (_plot: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, max > 0 ? max * 1.1 : 1];
  // Every day with data labelled if there is room, else those of every second, third… day of the span.
  const daySplits = (plot: uPlot) => {
    const step = Math.ceil((spanDays * LABEL_PX) / Math.max(1, plot.bbox.width / uPlot.pxRatio));
    return days.filter((seconds) => ((seconds - days[0]) / DAY) % step === 0);
  };
  const options: uPlot.Options = {
    width: 300,
    height: HEIGHT,
    scales: { x: { time: true, range: [first, last] }, y: { range: fromZero }, ...(hasPercent ? { pct: { range: [0, 100] } } : {}) },
    series: [
      { label: 'day (UTC)', value: (_plot, seconds) => (seconds === null ? '' : day(seconds)) },
      ...lines.map((line, index) => ({
        label: line.label,
        stroke: line.color,
        width: bars ? 0 : 2,
        ...(bars ? { fill: line.color, paths: groupedBars(days, index, lines.length), points: { show: false } } : { points: { show: days.length < 60 } }),
        scale: line.percent ? 'pct' : 'y',
        value: (_plot: uPlot, value: number | null) => (value === null ? '–' : line.percent ? `${value.toFixed(1)} %` : value.toLocaleString('en-US')),
      })),
    ],
    axes: [
      bars ? { splits: daySplits, values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => day(tick).slice(5)) } : {},
      { size: 60, values: (_plot: uPlot, ticks: number[]) => ticks.map(compact) },
      ...(hasPercent ? [{ scale: 'pct', side: 1, size: 56, grid: { show: false }, values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => `${tick} %`) }] : []),
    ],
    hooks: {
      // What the x axis spans, in epoch seconds, as drawn: for a test (and a user's own script) to read.
      setScale: [
        (plot, key) => {
          if (key === 'x') Object.assign(element.dataset, { xMin: String(plot.scales.x.min), xMax: String(plot.scales.x.max) });
        },
      ],
      destroy: [() => resized.disconnect()],
    },
  };
  const plot = new uPlot(options, [days, ...lines.map((line) => line.values)] as uPlot.AlignedData, element);
  // As wide as the card, whatever the screen: drawn again when the card's width changes.
  const resized = new ResizeObserver(() => {
    const width = element.clientWidth - PADDING;
    if (width > 0 && width !== plot.width) plot.setSize({ width, height: HEIGHT });
  });
  resized.observe(element);
  return { element, plot };
}
