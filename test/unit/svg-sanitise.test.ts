import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { decoderInput, keepReference, sanitiseCss, sanitiseSvg } from '../../service/assets/svg-sanitise';

/**
 * The SVG sanitiser (service/assets/svg-sanitise.ts) as tables: input, and
 * the exact text it becomes (or null: refused). docs/security.md, Inputs: thumbnails.
 */

const SVG = (body: string) => `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">${body}</svg>`;
const SHA = 'a'.repeat(64);

describe('sanitiseSvg: references to files are removed, fragments and data: stay', () => {
  const rows: [string, string, string | null][] = [
    // [name, input, expected]
    ['plain shapes are kept', SVG('<rect width="10" height="5" fill="#f00"/>'), SVG('<rect width="10" height="5" fill="#f00"/>')],
    ['<image href> to a blob name beside it', SVG(`<image href="${SHA}.png" width="5"/>`), SVG('<image width="5"/>')],
    ['<image xlink:href> relative ../', SVG('<image xlink:href="../blobs/x.png"/>'), SVG('<image/>')],
    ['absolute file: URL', SVG('<image href="file:///etc/passwd"/>'), SVG('<image/>')],
    ['absolute path', SVG('<image href="/etc/passwd"/>'), SVG('<image/>')],
    ['http URL', SVG('<image href="http://127.0.0.1:1/x.png"/>'), SVG('<image/>')],
    ['href with surrounding spaces', SVG('<image href="  x.png "/>'), SVG('<image/>')],
    ['href in upper case (any spelling of the local name)', SVG('<image HREF="x.png"/>'), SVG('<image/>')],
    ['<use> of another file', SVG('<use href="other.svg#a"/>'), SVG('<use/>')],
    ['<use> of a fragment stays', SVG('<use href="#a"/><use xlink:href="#b"/>'), SVG('<use href="#a"/><use xlink:href="#b"/>')],
    ['a data: PNG stays', SVG('<image href="data:image/png;base64,iVBORw0K"/>'), SVG('<image href="data:image/png;base64,iVBORw0K"/>')],
    [
      'an SVG inside a data: URI is rebuilt too',
      SVG(`<image href="data:image/svg+xml;base64,${Buffer.from(SVG('<image href="x.png"/>')).toString('base64')}"/>`),
      SVG(`<image href="data:image/svg+xml;base64,${Buffer.from(SVG('<image/>')).toString('base64')}"/>`),
    ],
    ['href written with character references', SVG('<image href="&#120;.png"/>'), SVG('<image/>')],
    ['XInclude', SVG('<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd" parse="text"/>'), SVG('<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" parse="text"/>')],
    ['xml:base is dropped', SVG('<g xml:base="file:///etc/"><use href="#a"/></g>'), SVG('<g><use href="#a"/></g>')],
    ['src on any element', SVG('<foreignObject><img src="x.png"/></foreignObject>'), SVG('<foreignObject><img/></foreignObject>')],
    ['fill url() to another file', SVG('<rect fill="url(other.svg#g)"/>'), SVG('<rect fill="url(#missing)"/>')],
    ['fill url() to a fragment stays', SVG('<rect fill="url(#g)"/>'), SVG('<rect fill="url(&quot;#g&quot;)"/>')],
    ['style attribute url()', SVG('<rect style="filter:url(\'f.svg#x\');fill:red"/>'), SVG('<rect style="filter:url(#missing);fill:red"/>')],
    ['<style> url() and @import', SVG('<style>@import "x.css"; rect { fill: url(a.svg#p) }</style>'), SVG('<style> rect { fill: url(#missing) }</style>')],
    ['<style> in CDATA', SVG('<style><![CDATA[rect{mask:URL( "m.svg" )}]]></style>'), SVG('<style>rect{mask:url(#missing)}</style>')],
    ['<style> split over CDATA and text', SVG('<style>rect{fill:u<![CDATA[rl(x.png)]]>}</style>'), SVG('<style>rect{fill:url(#missing)}</style>')],
    ['CSS escapes in url', SVG('<style>rect{fill:u\\72 l(x.png)}</style>'), SVG('<style>rect{fill:url(#missing)}</style>')],
    ['an escaped backslash cannot make a second escape', SVG('<style>rect{fill:\\5c 75rl(x.png)}</style>'), SVG('<style>rect{fill:75rl(x.png)}</style>')],
    ['a comment is a space (no @import to hide), and its url() still goes', SVG('<style>@im/**/port url(x.css);</style>'), SVG('<style>@im port url(#missing);</style>')],
    ['the xml-stylesheet processing instruction and the XML declaration go', '<?xml version="1.0"?><?xml-stylesheet href="x.css"?>' + SVG(''), SVG('')],
    ['comments go', SVG('<!-- <image href="x.png"/> --><g/>'), SVG('<g/>')],
    [
      'an external entity expands to nothing',
      `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>${SVG('<text>&x;</text>')}`,
      SVG('<text></text>'),
    ],
    ['an external DTD is dropped', `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">${SVG('<g/>')}`, SVG('<g/>')],
    [
      'internal entities are expanded here (Illustrator namespaces)',
      `<!DOCTYPE svg [<!ENTITY ns_svg "http://www.w3.org/2000/svg">]><svg xmlns="&ns_svg;"><g/></svg>`,
      '<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>',
    ],
    [
      'an entity whose text is markup is read as markup, and sanitised',
      `<!DOCTYPE svg [<!ENTITY e "&#60;image href='x.png'/>">]>${SVG('&e;')}`,
      SVG('<image/>'),
    ],
    [
      'an entity that opens <style> still has the text after it read as CSS',
      `<!DOCTYPE svg [<!ENTITY s "<style>">]>${SVG('&s;@import url(x.css); a{fill:url(y.svg)}</style>')}`,
      SVG('<style> a{fill:url(#missing)}</style>'),
    ],
    ['an entity in an attribute', `<!DOCTYPE svg [<!ENTITY u "x.png">]>${SVG('<image href="&u;"/>')}`, SVG('<image/>')],
    ['default attributes of an ATTLIST are never applied', `<!DOCTYPE svg [<!ATTLIST image href CDATA "x.png">]>${SVG('<image/>')}`, SVG('<image/>')],
    ['a parameter entity expands to nothing', `<!DOCTYPE svg [<!ENTITY % p SYSTEM "x.dtd"> %p;]>${SVG('<g/>')}`, SVG('<g/>')],
    ['text is re-escaped', SVG('<text>a &lt; b &amp; c</text>'), SVG('<text>a &lt; b &amp; c</text>')],
    ['a byte-order mark and CRLF', `\uFEFF${SVG('<g>\r\n</g>')}`, SVG('<g>\n</g>')],
    // refused
    ['a billion laughs', `<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">${Array.from({ length: 9 }, (_, i) => `<!ENTITY ${'b'.repeat(i + 1)} "${`&${i === 0 ? 'a' : 'b'.repeat(i)};`.repeat(10)}">`).join('')}]>${SVG('<text>&bbbbbbbbb;</text>')}`, null],
    ['an unterminated comment', SVG('<!-- <image href="x.png"/>'), null],
    ['an unterminated tag', '<svg><image href="x.png"', null],
    ['an attribute without quotes', SVG('<image href=x.png/>'), null],
    ['< in an attribute', SVG('<image href="a<b"/>'), null],
    ['a malformed character reference', SVG('<text>&#xZZ;</text>'), null],
  ];
  for (const [name, input, expected] of rows) {
    test(name, () => assert.equal(sanitiseSvg(input), expected));
  }
});

describe('sanitiseCss', () => {
  const rows: [string, string][] = [
    ['fill: red', 'fill: red'],
    ['fill: url(#a)', 'fill: url("#a")'],
    ['fill: url( "#a" ) blue', 'fill: url("#a") blue'],
    ['fill: url(x.svg#a) blue', 'fill: url(#missing) blue'],
    ['fill: URL(x)', 'fill: url(#missing)'],
    ["fill: url('file:///etc/passwd')", 'fill: url(#missing)'],
    ['fill: url(data:image/png;base64,AAAA)', 'fill: url("data:image/png;base64,AAAA")'],
    ['fill: url(', 'fill: url(#missing)'],
    ['src: src("x.woff")', 'src: url(#missing)'],
    ['@import "a.css"; b{}', ' b{}'],
    ['@IMPORT url(a.css)', ''],
    ['@\\69mport "a.css";', ''],
    ['background: image-set("a.png" 1x)', 'background: x-removed("a.png" 1x)'],
    ['background: -webkit-image-set(url(a.png) 1x)', 'background: x-removed(url(#missing) 1x)'],
    ['fill: u/**/rl(x)', 'fill: u rl(x)'],
  ];
  for (const [input, expected] of rows) {
    test(JSON.stringify(input), () => assert.equal(sanitiseCss(input), expected));
  }
});

describe('keepReference', () => {
  const rows: [string, string | null][] = [
    ['#a', '#a'],
    [' #a ', '#a'],
    ['', null],
    ['x.png', null],
    ['./x.png', null],
    ['//host/x.png', null],
    ['file:///etc/passwd', null],
    ['DATA:image/png;base64,AA', 'DATA:image/png;base64,AA'],
    ['data:', null],
    ['data:image/svg+xml,%3Csvg%3E%3Cimage%20href%3D%22x.png%22%2F%3E%3C%2Fsvg%3E', `data:image/svg+xml;base64,${Buffer.from('<svg><image/></svg>').toString('base64')}`],
    ['data:image/svg+xml,%E0%A4%A', null],
  ];
  for (const [input, expected] of rows) {
    test(JSON.stringify(input), () => assert.equal(keepReference(input), expected));
  }
});

describe('decoderInput: which bytes are SVG', () => {
  test('a PNG passes unchanged', () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    assert.equal(decoderInput(png), png);
  });
  test('SVG is rebuilt; gzip-compressed SVG (svgz) is unpacked and rebuilt', () => {
    const svg = SVG('<image href="x.png"/>');
    assert.equal(decoderInput(Buffer.from(svg))!.toString(), SVG('<image/>'));
    assert.equal(decoderInput(gzipSync(svg))!.toString(), SVG('<image/>'));
  });
  test('what libvips would take for SVG is rebuilt: <svg past a long comment, after a byte-order mark; a raster with <svg inside is not', () => {
    const far = Buffer.from(`<!--${'x'.repeat(200_000)}-->${SVG('<image href="x.png"/>')}`);
    assert.equal(decoderInput(far)!.toString(), SVG('<image/>'));
    assert.equal(decoderInput(Buffer.from(`\uFEFF${SVG('<image href="x.png"/>')}`))!.toString(), SVG('<image/>'));
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('tEXt<svg>')]);
    assert.equal(decoderInput(png), png);
  });
  test('text with <svg somewhere near the start that cannot be read is refused, not passed on', () => {
    assert.equal(decoderInput(Buffer.from('hello <svg><image href="x.png"')), null);
    assert.equal(decoderInput(Buffer.from([0x1f, 0x8b, 0, 0])), null);
  });
});
