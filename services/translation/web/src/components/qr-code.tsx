// A QR code drawn in the page as SVG (qrcode-generator computes the modules; nothing leaves the browser). One path of
// unit squares, a 4-module quiet zone, black on white for any scanner. The library loads only when a code is shown.
import { useEffect, useState } from 'preact/hooks';

type QrFactory = typeof import('qrcode-generator');

/** The SVG path of the dark modules of `text`'s QR code (error correction M), and the code's size in modules. */
export function qrPath(qrcode: QrFactory, text: string): { path: string; size: number } {
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const count = qr.getModuleCount();
  let path = '';
  for (let row = 0; row < count; row++) {
    for (let col = 0; col < count; col++) if (qr.isDark(row, col)) path += `M${col + 4} ${row + 4}h1v1h-1z`;
  }
  return { path, size: count + 8 };
}

export function QrCode({ text, label }: { text: string; label: string }) {
  const [drawn, setDrawn] = useState<{ path: string; size: number } | null>(null);
  useEffect(() => {
    let live = true;
    void import('qrcode-generator').then((m) => {
      if (live) setDrawn(qrPath(m.default, text));
    });
    return () => {
      live = false;
    };
  }, [text]);
  if (!drawn) return <p class="muted">Drawing the QR code…</p>;
  const { path, size } = drawn;
  return (
    <svg
      class="qr"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${size} ${size}`}
      width={size * 5}
      height={size * 5}
      shape-rendering="crispEdges"
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
