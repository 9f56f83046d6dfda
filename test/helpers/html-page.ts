// A page of HTML as a dynamic site would send it: repeated markup around text from a seeded
// generator, so a compressor finds the markup's repetition but not a body made of one phrase again
// and again (which any coding shrinks to nothing, hiding a lost or repeated piece).

/** `bytes` of HTML (UTF-8, ASCII only), the same for the same seed. */
export function htmlPage(bytes: number, seed = 1): Buffer {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
  const letters = 'etaoinshrdlucmfwypvbgkjqxz';
  const word = () => {
    let w = '';
    for (let n = 2 + Math.floor(random() * 8); n > 0; n--)
      w += letters[Math.floor(random() ** 1.6 * letters.length)];
    return w;
  };
  const vocabulary = Array.from({ length: 3000 }, word);
  const pick = () => vocabulary[Math.floor(random() ** 2 * vocabulary.length)]!;
  const words = (n: number) => Array.from({ length: n }, pick).join(' ');
  const end = '</table></body></html>\n';
  let page = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${words(4)}</title></head>\n<body>\n<table class="products">\n`;
  for (let id = 1000; page.length < bytes;) {
    id += 1 + Math.floor(random() * 7);
    page += `<tr id="p${id}"><td class="name"><a href="/items/${id}/${pick()}">${words(3)}</a></td><td class="price">${(random() * 500).toFixed(2)}</td><td class="desc">${words(6 + Math.floor(random() * 12))}</td></tr>\n`;
  }
  return Buffer.from(page.slice(0, bytes - end.length) + end);
}
