/** The buy route of a listing, the path part of its resource URL (the x402 `resource`). */
export function resourcePath(owner: string, slug: string): string {
  return `/api/r/${owner}/${slug}`;
}

export function resourceUrl(baseUrl: string, owner: string, slug: string): string {
  return `${baseUrl}${resourcePath(owner, slug)}`;
}
