import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartDataset,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Distinct in light and dark, in the order series get them. */
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2', '#edc948', '#9c755f'];

export interface BarSeries {
  label: string;
  values: number[];
}

/**
 * A stacked bar chart (chart.js on a canvas). A canvas says nothing to a screen reader: `summary`
 * is its accessible name, and every page that draws one shows the same numbers in a table too.
 */
export function BarChart(props: {
  summary: string;
  labels: string[];
  series: BarSeries[];
  format?: (value: number) => string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const element = canvas.current;
    if (!element) return;
    const draw = () => {
      const style = getComputedStyle(document.documentElement);
      const text = style.getPropertyValue('--fg-soft').trim() || '#59636e';
      const grid = style.getPropertyValue('--border').trim() || '#d1d9e0';
      const datasets: ChartDataset<'bar'>[] = props.series.map((series, i) => ({
        label: series.label,
        data: series.values,
        backgroundColor: PALETTE[i % PALETTE.length],
      }));
      const format = props.format ?? ((value: number) => value.toLocaleString());
      return new Chart(element, {
        type: 'bar',
        data: { labels: props.labels, datasets },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          color: text,
          scales: {
            x: { stacked: true, ticks: { color: text }, grid: { color: grid } },
            y: {
              stacked: true,
              beginAtZero: true,
              ticks: { color: text, callback: (value) => format(Number(value)) },
              grid: { color: grid },
            },
          },
          plugins: {
            tooltip: {
              callbacks: { label: (item) => `${item.dataset.label}: ${format(Number(item.raw))}` },
            },
          },
        },
      });
    };
    let chart = draw();
    // The theme is a data attribute on <html>: redraw in the new colours when it changes.
    const themes = new MutationObserver(() => {
      chart.destroy();
      chart = draw();
    });
    themes.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => {
      themes.disconnect();
      chart.destroy();
    };
  }, [props.summary, props.labels.join('\n'), JSON.stringify(props.series)]);
  return (
    <div class="chart">
      <canvas ref={canvas} role="img" aria-label={props.summary} />
    </div>
  );
}
