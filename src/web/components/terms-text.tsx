import type { ComponentChildren } from 'preact';

/**
 * The agreement's text, which the service keeps as a small Markdown document (a title, paragraphs,
 * a numbered list, **bold** and `code`), shown as text rather than as its source. Built from
 * elements, never HTML strings; anything else in it stays literal.
 */
export function TermsText({ text }: { text: string }) {
  const blocks: ComponentChildren[] = [];
  let items: string[] = [];
  const flush = () => {
    if (items.length === 0) return;
    blocks.push(
      <ol key={`list-${blocks.length}`}>
        {items.map((item) => (
          <li key={item}>{inline(item)}</li>
        ))}
      </ol>,
    );
    items = [];
  };
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim());
    if (lines.length === 0) continue;
    if (lines.length === 1 && lines[0]!.startsWith('# ')) {
      // The title: the legend already names the agreement.
      continue;
    }
    if (/^\d+\.\s/.test(lines[0]!)) {
      for (const line of lines) {
        if (/^\d+\.\s/.test(line)) items.push(line.replace(/^\d+\.\s+/, ''));
        else items[items.length - 1] += ` ${line.trim()}`;
      }
      continue;
    }
    flush();
    blocks.push(<p key={`p-${blocks.length}`}>{inline(lines.map((line) => line.trim()).join(' '))}</p>);
  }
  flush();
  return <>{blocks}</>;
}

function inline(text: string): ComponentChildren[] {
  return text.split(/(\*\*[^*]+\*\*|`[^`]+`)/).map((part, index) => {
    if (part.startsWith('**') && part.endsWith('**') && part.length > 4)
      return <strong key={index}>{part.slice(2, -2)}</strong>;
    if (part.startsWith('`') && part.endsWith('`') && part.length > 2)
      return <code key={index}>{part.slice(1, -1)}</code>;
    return part;
  });
}
