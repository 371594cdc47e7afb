// The report controls: date range (inputs and presets), the trend's interval, the filters and the
// comparison toggle. They show a View and hand a changed one back; the page keeps it in the URL.
// A filter is offered only where there is something to pick (the project's engines and segments,
// the countries, personas and models its runs name) and a report takes it; the comparison only
// where the service serves it.
import type { Choice, Options } from './api';
import { emptyFilters, FILTERS, rangeStart, type Filter, type Interval, type View } from './state';

function el<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} is missing from the page`);
  return e as T;
}

export interface ControlsSupport {
  /** The filters some report takes (their operations declare them). */
  filters: ReadonlySet<Filter>;
  /** Whether the service compares periods (visibility declares `compare`). */
  compare: boolean;
}

export class Controls {
  private readonly form = el<HTMLFormElement>('filters');
  private readonly start = el<HTMLInputElement>('start_date');
  private readonly end = el<HTMLInputElement>('end_date');
  private readonly interval = el<HTMLSelectElement>('interval');
  private readonly compare = el<HTMLInputElement>('compare');
  private readonly compareControl = el<HTMLElement>('compare-control');
  private readonly selects = Object.fromEntries(FILTERS.map((f) => [f, el<HTMLSelectElement>(f)])) as Record<Filter, HTMLSelectElement>;
  private view: View = { compare: false, filters: emptyFilters() };
  /** The day presets end on when the range has no end: the latest day with runs (the report's window end). */
  private latest: string | null = null;

  /** `changed` gets every view the user makes. */
  constructor(changed: (view: View) => void) {
    const emit = (next: Partial<View>): void => changed({ ...this.view, ...next });
    this.start.addEventListener('change', () => changed(this.dates(this.start.value, this.view.end_date)));
    this.end.addEventListener('change', () => changed(this.dates(this.view.start_date, this.end.value)));
    this.interval.addEventListener('change', () => {
      const v = this.interval.value as Interval;
      const next: View = { ...this.view };
      if (v === 'day') delete next.interval;
      else next.interval = v;
      changed(next);
    });
    this.compare.addEventListener('change', () => emit({ compare: this.compare.checked }));
    for (const f of FILTERS) {
      this.selects[f].addEventListener('change', () => {
        const picked = [...this.selects[f].selectedOptions].map((o) => o.value);
        emit({ filters: { ...this.view.filters, [f]: picked } });
      });
    }
    for (const b of this.form.querySelectorAll<HTMLButtonElement>('button[data-days]')) {
      b.addEventListener('click', () => {
        const end = this.view.end_date ?? this.latest;
        if (end) changed(this.dates(rangeStart(end, Number(b.dataset.days)), end));
      });
    }
    el('range-default').addEventListener('click', () => changed(this.dates(undefined, undefined)));
    el('clear-filters').addEventListener('click', () => emit({ filters: emptyFilters() }));
    this.form.addEventListener('submit', (ev) => ev.preventDefault());
  }

  /** The view with this range (an absent end or start: the API's default). */
  private dates(start: string | undefined, end: string | undefined): View {
    const next: View = { ...this.view };
    delete next.start_date;
    delete next.end_date;
    if (start) next.start_date = start;
    if (end) next.end_date = end;
    return next;
  }

  /** The lists the filters pick from, for the project shown; a filter with nothing to pick is hidden. */
  offer(options: Options, support: ControlsSupport): void {
    const lists: Record<Filter, Choice[]> = {
      engine_ids: options.engines, segment_ids: options.segments, ...options.dimensions,
    };
    for (const f of FILTERS) {
      const select = this.selects[f];
      select.replaceChildren(...lists[f].map((c) => new Option(c.label, c.value)));
      select.size = Math.min(Math.max(lists[f].length, 2), 5);
      select.closest('label')!.hidden = lists[f].length === 0 || !support.filters.has(f);
    }
    this.compareControl.hidden = !support.compare;
    this.form.hidden = false;
  }

  /** Shows a view (and the latest day with runs, where presets end when the range has none). */
  show(view: View, latest: string | null): void {
    this.view = view;
    if (latest) this.latest = latest;
    this.start.value = view.start_date ?? '';
    this.end.value = view.end_date ?? '';
    this.start.placeholder = this.end.placeholder = 'default';
    this.interval.value = view.interval ?? 'day';
    this.compare.checked = view.compare;
    for (const f of FILTERS) {
      const picked = new Set(view.filters[f]);
      for (const o of this.selects[f].options) o.selected = picked.has(o.value);
    }
  }

  hide(): void {
    this.form.hidden = true;
  }
}
