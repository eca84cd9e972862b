/** The most pages allPages follows: a tenant's tools at one per page would take 1,000 by default. */
export const MAX_PAGES = 100_000;

/**
 * Every page of a paged RPC (Google AIP-158: ListTools, GetToolStats), the first asked with an
 * empty page_token and each next with the last answer's next_page_token, until that is empty.
 * Stops with an error when a server gives the same token twice in a row (it would never end) or
 * after `maxPages` pages.
 */
export async function* allPages<P extends { readonly nextPageToken: string }>(ask: (pageToken: string) => Promise<P>, maxPages = MAX_PAGES): AsyncGenerator<P, void, undefined> {
  let token = '';
  for (let pages = 0; pages < maxPages; pages++) {
    const page = await ask(token);
    yield page;
    if (page.nextPageToken === '') return;
    if (page.nextPageToken === token) throw new Error('the server gave the same next_page_token twice: its pages do not advance');
    token = page.nextPageToken;
  }
  throw new Error(`more than ${maxPages} pages: stopped`);
}
