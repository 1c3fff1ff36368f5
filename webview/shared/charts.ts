/**
 * Chart.js for the studio's webviews: only the parts they use (line and bar charts on linear and
 * category scales), colours from the editor's theme, no animation (live data redraws often, and
 * motion distracts from the numbers). Chart.js draws on a canvas and injects no style sheet, so it
 * runs under the panels' strict CSP.
 */
import type { ChartDataset } from 'chart.js';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';

Chart.register(
  LineController,
  LineElement,
  PointElement,
  BarController,
  BarElement,
  LinearScale,
  CategoryScale,
  Legend,
  Tooltip,
);

const THEME_COLORS = [
  '--vscode-charts-blue',
  '--vscode-charts-orange',
  '--vscode-charts-green',
  '--vscode-charts-purple',
  '--vscode-charts-red',
  '--vscode-charts-yellow',
];
const FALLBACK_COLORS = ['#3794ff', '#d18616', '#89d185', '#b180d7', '#f14c4c', '#cca700'];

function cssVariable(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/** The n-th series colour of the theme. */
export function seriesColor(n: number): string {
  const i = n % THEME_COLORS.length;
  return cssVariable(THEME_COLORS[i], FALLBACK_COLORS[i]);
}

function applyTheme(): void {
  Chart.defaults.color = cssVariable('--vscode-foreground', '#cccccc');
  Chart.defaults.borderColor = cssVariable('--vscode-panel-border', 'rgba(128,128,128,0.35)');
  Chart.defaults.font.family = cssVariable('--vscode-font-family', 'sans-serif');
  Chart.defaults.animation = false;
}

/** A line chart of series over steps, with a legend (each series can be hidden by clicking it). */
export function lineChart(
  canvas: HTMLCanvasElement,
  yTitle: string,
): Chart<'line', { x: number; y: number }[]> {
  applyTheme();
  return new Chart(canvas, {
    type: 'line',
    data: { datasets: [] },
    options: {
      parsing: false,
      normalized: true,
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: {
        x: { type: 'linear', title: { display: true, text: 'step' } },
        y: { type: 'linear', title: { display: true, text: yTitle } },
      },
      plugins: { legend: { display: true, position: 'bottom' } },
      elements: { point: { radius: 0, hitRadius: 6 }, line: { borderWidth: 1.5 } },
    },
  });
}

/**
 * Sets a line chart's series by name (kept in a stable order and colour), then redraws. Returns
 * how many points it now holds in all.
 */
export function setLineSeries(
  chart: Chart<'line', { x: number; y: number }[]>,
  series: Record<string, [number, number][]>,
): number {
  const names = Object.keys(series).sort();
  chart.data.datasets = names.map((name, i): ChartDataset<'line', { x: number; y: number }[]> => {
    const color = seriesColor(i);
    return {
      label: name,
      data: series[name].map(([x, y]) => ({ x, y })),
      borderColor: color,
      backgroundColor: color,
    };
  });
  chart.update('none');
  return names.reduce((n, name) => n + series[name].length, 0);
}

/** A bar chart with categories on x (tools) and one bar per dataset in each. */
export function barChart(
  canvas: HTMLCanvasElement,
  labels: string[],
  datasets: { label: string; data: (number | null)[] }[],
  yTitle: string,
): Chart<'bar', (number | null)[]> {
  applyTheme();
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: datasets.map((d, i) => ({
        ...d,
        backgroundColor: seriesColor(i),
        borderColor: seriesColor(i),
      })),
    },
    options: {
      scales: { y: { title: { display: true, text: yTitle } } },
      plugins: { legend: { display: true, position: 'bottom' } },
    },
  });
}
