// The page's icons, drawn as inline SVG in the text's colour: no icon font and no emoji, which a
// machine without an emoji font shows as empty boxes. Each is decoration: its button is labelled.

const SVG = 'http://www.w3.org/2000/svg';

/** A thumb raised: its outline (stroke) and, when its button is pressed, its fill (playground.css). */
const THUMB =
  'M7 10v11M7 10l4-8a2.5 2.5 0 0 1 3 2.5V9h5.2a2 2 0 0 1 2 2.3l-1.4 8A2 2 0 0 1 17.8 21H4a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1z';

function icon(d, transform) {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [name, value] of Object.entries({
    class: 'icon',
    viewBox: '0 0 24 24',
    width: '16',
    height: '16',
    'aria-hidden': 'true',
    focusable: 'false',
  }))
    svg.setAttribute(name, value);
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', d);
  if (transform) path.setAttribute('transform', transform);
  svg.append(path);
  return svg;
}

export const thumbUp = () => icon(THUMB);
export const thumbDown = () => icon(THUMB, 'rotate(180 12 12)');
