// Time series per UTC day drawn with uPlot (canvas: thousands of points stay cheap to draw and redraw).
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

export function timeChart(title: string, days: number[], lines: Line[]): { element: HTMLElement; plot?: uPlot } {
  const element = h('figure', { class: 'chart', 'data-chart': title }, h('figcaption', {}, title));
  if (days.length === 0 || lines.length === 0) {
    element.append(h('p', { class: 'empty' }, 'no data in this range'));
    return { element };
  }
  const hasPercent = lines.some((line) => line.percent);
  const options: uPlot.Options = {
    width: 520,
    height: 200,
    scales: { x: { time: true }, ...(hasPercent ? { pct: { range: [0, 100] } } : {}) },
    series: [
      { label: 'day (UTC)', value: (_plot, seconds) => (seconds === null ? '' : new Date(seconds * 1000).toISOString().slice(0, 10)) },
      ...lines.map((line) => ({
        label: line.label,
        stroke: line.color,
        width: 2,
        points: { show: days.length < 60 },
        scale: line.percent ? 'pct' : 'y',
        value: (_plot: uPlot, value: number | null) => (value === null ? '–' : line.percent ? `${value.toFixed(1)} %` : value.toLocaleString('en-US')),
      })),
    ],
    axes: [{}, { size: 60, values: (_plot: uPlot, ticks: number[]) => ticks.map(compact) }, ...(hasPercent ? [{ scale: 'pct', side: 1, size: 56, grid: { show: false }, values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => `${tick} %`) }] : [])],
  };
  const plot = new uPlot(options, [days, ...lines.map((line) => line.values)] as uPlot.AlignedData, element);
  return { element, plot };
}
