// Domain classification shared by the evidence endpoints: the project's own domains, its competitors'
// domains, and community/discussion platforms. Cited domains are stored as the projector derives them
// (lowercase host, no leading 'www.'), so every base domain here is normalized the same way.
import { competitorDomainValues, domainOf, ownDomainValues, type ReadStore } from './store';

/** 'acme.com', 'WWW.Acme.com' or 'https://acme.com/about' all give 'acme.com'; null when nothing usable. */
export function normalizeDomain(value: string | null): string | null {
  const v = value?.trim();
  if (!v) return null;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `https://${v}`;
  return domainOf(withScheme) || null;
}

/** True when `domain` is `base` itself or one of its subdomains ('blog.acme.com' under 'acme.com'). */
export function isSameOrSubdomain(domain: string, base: string): boolean {
  return domain === base || domain.endsWith(`.${base}`);
}

export function matchesAny(domain: string, bases: readonly string[]): boolean {
  return bases.some((base) => isSameOrSubdomain(domain, base));
}

function normalizedSet(values: Array<string | null>): string[] {
  const out = new Set<string>();
  for (const v of values) {
    const d = normalizeDomain(v);
    if (d) out.add(d);
  }
  return [...out].sort();
}

/** The project's domain and its non-deleted 'domain' terms. */
export function ownDomains(store: ReadStore, projectId: string): string[] {
  return normalizedSet(ownDomainValues(store, projectId));
}

/** Domains of the project's non-deleted competitors. */
export function competitorDomains(store: ReadStore, projectId: string): string[] {
  return normalizedSet(competitorDomainValues(store, projectId));
}

export type Platform = 'reddit' | 'quora' | 'stackexchange' | 'hackernews' | 'forum';

/** Known discussion sites; their subdomains too (old.reddit.com, math.stackexchange.com, ru.stackoverflow.com). */
const PLATFORM_DOMAINS: ReadonlyArray<readonly [string, Platform]> = [
  ['reddit.com', 'reddit'],
  ['quora.com', 'quora'],
  ['stackexchange.com', 'stackexchange'],
  ['stackoverflow.com', 'stackexchange'],
  ['news.ycombinator.com', 'hackernews'],
];

/** Self-hosted forums announce themselves by host name: forum.x, forums.x, community.x, discuss.x, *discourse*. */
const FORUM_HOST = /^(forum|forums|community|discuss)\./;

/** The community platform of a cited domain, or null when it is not a discussion site. */
export function communityPlatform(domain: string): Platform | null {
  for (const [base, platform] of PLATFORM_DOMAINS) if (isSameOrSubdomain(domain, base)) return platform;
  if (FORUM_HOST.test(domain) || domain.includes('discourse')) return 'forum';
  return null;
}
