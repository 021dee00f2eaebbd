// The report's charts, as standalone SVG: horizontal bars per contender, and curves against a
// (logarithmic) x axis for the scaling runs.

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** One bar per label. */
export function barChart(title: string, bars: readonly { label: string; value: number }[], unit = ''): string {
  const max = Math.max(...bars.map((b) => b.value).filter(Number.isFinite), 1);
  const rowHeight = 28;
  const width = 760;
  const labelWidth = 260;
  const body = bars
    .map((bar, i) => {
      const y = 30 + i * rowHeight;
      const length = Number.isFinite(bar.value) ? ((width - labelWidth - 110) * bar.value) / max : 0;
      return (
        `<text x="${labelWidth - 8}" y="${y + 17}" text-anchor="end">${escape(bar.label)}</text>` +
        `<rect x="${labelWidth}" y="${y + 4}" width="${length.toFixed(1)}" height="18" fill="#3b6ea5"/>` +
        `<text x="${(labelWidth + length + 6).toFixed(1)}" y="${y + 17}">${Number.isFinite(bar.value) ? bar.value.toFixed(0) : 'n/a'}${unit}</text>`
      );
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${40 + bars.length * rowHeight}" font-family="sans-serif" font-size="13">
<text x="10" y="18" font-weight="bold">${escape(title)}</text>
${body}
</svg>
`;
}

export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

const COLOURS = ['#3b6ea5', '#d9822b', '#4a9c5d', '#b8404a'];

/** Curves of y against x, x on a log scale (the runs step by factors), y from zero. */
export function lineChart(title: string, xLabel: string, yLabel: string, series: readonly Series[]): string {
  const [width, height, left, right, top, bottom] = [760, 360, 70, 170, 36, 50];
  const points = series.flatMap((s) => s.points);
  const xs = points.map(([x]) => Math.log10(x));
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const yMax = Math.max(...points.map(([, y]) => y).filter(Number.isFinite), 1) * 1.1;
  const px = (x: number) => left + ((Math.log10(x) - xMin) / Math.max(xMax - xMin, 1e-9)) * (width - left - right);
  const py = (y: number) => height - bottom - (y / yMax) * (height - top - bottom);
  const ticks = [...new Set(points.map(([x]) => x))]
    .sort((a, b) => a - b)
    .map((x) => `<text x="${px(x).toFixed(1)}" y="${height - bottom + 18}" text-anchor="middle">${x.toLocaleString('en')}</text>`)
    .join('\n');
  const yTicks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => {
      const y = py(yMax * f);
      return `<line x1="${left}" x2="${width - right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#ddd"/><text x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${(yMax * f).toFixed(yMax < 10 ? 1 : 0)}</text>`;
    })
    .join('\n');
  const curves = series
    .map((s, i) => {
      const colour = COLOURS[i % COLOURS.length] ?? '#000';
      const path = s.points.map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
      const dots = s.points.map(([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${colour}"/>`).join('');
      return `<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>${dots}<text x="${width - right + 12}" y="${top + 16 + i * 18}" fill="${colour}">${escape(s.name)}</text>`;
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">
<text x="10" y="20" font-weight="bold" font-size="13">${escape(title)}</text>
${yTicks}
${ticks}
<text x="${(left + (width - right)) / 2}" y="${height - 12}" text-anchor="middle">${escape(xLabel)}</text>
<text x="14" y="${(top + height - bottom) / 2}" transform="rotate(-90 14 ${(top + height - bottom) / 2})" text-anchor="middle">${escape(yLabel)}</text>
${curves}
</svg>
`;
}
