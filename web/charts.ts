// The dashboard's charts (Chart.js, bundled: no CDN). Only the parts used are registered, which
// keeps the bundle small. No animation: a chart is drawn once per load (and screenshots are stable).
import {
  BarController, BarElement, CategoryScale, Chart, Filler, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip,
} from 'chart.js';
import type { Rankings, Timeseries } from './api';

Chart.register(LineController, LineElement, PointElement, BarController, BarElement, CategoryScale, LinearScale, Filler, Legend, Tooltip);

const BRAND = '#2563eb';
const BAND = 'rgba(37, 99, 235, 0.15)';
const OTHER = '#94a3b8';

/** What a chart shows, in words: for screen readers (and the browser test reads it). */
function describe(canvas: HTMLCanvasElement, text: string): void {
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', text);
}

const percent = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : v * 100);

/**
 * The trend: the brand's mention rate per day (week, month), with its 95 % Wilson interval as a band
 * (the area between the interval's low and high lines; the low line itself is left out of the legend).
 */
export function trendChart(canvas: HTMLCanvasElement, days: Timeseries, unit: 'day' | 'week' | 'month' = 'day'): Chart {
  describe(canvas, `Mention rate per ${unit} with its 95 % interval: ${days.length} ${unit}s` +
    (days.length > 0 ? `, ${days[0]!.date} to ${days[days.length - 1]!.date}` : ''));
  return new Chart(canvas, {
    type: 'line',
    data: {
      labels: days.map((d) => d.date),
      datasets: [
        { label: '95 % low', data: days.map((d) => percent(d.mention_rate_ci?.low)), borderWidth: 0, pointRadius: 0, fill: false },
        { label: '95 % interval', data: days.map((d) => percent(d.mention_rate_ci?.high)), borderWidth: 0, pointRadius: 0, backgroundColor: BAND, fill: '-1' },
        { label: 'Mention rate', data: days.map((d) => percent(d.mention_rate)), borderColor: BRAND, backgroundColor: BRAND, pointRadius: 2, borderWidth: 2 },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      scales: { y: { min: 0, max: 100, title: { display: true, text: '% of runs mentioning the brand' } } },
      plugins: {
        legend: { labels: { filter: (item) => item.text !== '95 % low' } },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${(c.parsed.y ?? 0).toFixed(1)} %` } },
      },
    },
  });
}

/** Share of voice per tracked entity, in the rankings' order, the brand in its own color. */
export function rankingsChart(canvas: HTMLCanvasElement, rows: Rankings): Chart {
  describe(canvas, `Share of voice of ${rows.length} entities: ${rows.map((r) => r.name).join(', ')}`);
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels: rows.map((r) => r.name),
      datasets: [{
        label: 'Share of voice (%)',
        data: rows.map((r) => percent(r.share_of_voice)),
        backgroundColor: rows.map((r) => (r.entity_type === 'brand' ? BRAND : OTHER)),
      }],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      indexAxis: 'y',
      scales: { x: { min: 0, title: { display: true, text: 'share of voice, %' } } },
      plugins: { legend: { display: false } },
    },
  });
}
