/** The code blocks of one language on a served docs page, as a reader copies them (HTML unescaped). */
export function codeBlocks(html: string, language: string): string[] {
  const pattern = new RegExp(`<pre[^>]*><code class="language-${language}">([\\s\\S]*?)</code></pre>`, 'g');
  return [...html.matchAll(pattern)].map((match) =>
    match[1]!
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&'),
  );
}
