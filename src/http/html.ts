// The few HTML pages the server writes itself (error pages, directory listings): one escaping
// function and one document skeleton, self-contained (no external resources, no scripts).

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A complete HTML5 document; `title` is escaped here, `style` and `body` are trusted markup. */
export function htmlPage(title: string, style: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
${style.trim()}
</style>
</head>
<body>
${body.trim()}
</body>
</html>
`;
}
