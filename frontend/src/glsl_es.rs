//! GLSL ES 1.00 (as glmark2 and kmscube write it) rewritten into the
//! Vulkan-flavoured GLSL 450 that naga's GLSL front end accepts.
//!
//! Why a rewrite: naga parses and validates GLSL 440–460 only. ES 1.00
//! differs from it in a handful of spellings, not in meaning: `attribute`
//! and `varying` instead of `layout(location) in/out`, `gl_FragColor`
//! instead of a declared output, `texture2D`/`textureCube` instead of
//! `texture`, combined `sampler2D` uniforms instead of a texture and a
//! sampler, loose uniforms without a binding, and `precision` statements.
//! Each is a local textual substitution, so a token rewrite of a few
//! hundred lines closes the gap and leaves parsing, type checking and
//! validation to naga (a second GLSL parser would duplicate all of that).
//!
//! The rewrite keeps every line on its line: declarations it adds go onto
//! an existing line, and [`Rewrite::original`] maps a (line, column) of the
//! rewritten text back to the column of the original token, so naga's
//! errors point into the file the user wrote.
//!
//! Substitutions (tokens outside comments; preprocessor lines are kept):
//! - `precision <q> <type>;` and the qualifiers `highp mediump lowp` → blanks;
//! - `attribute T x;` → `layout(location=K) in T x;` (K in declaration order);
//! - `varying T x;` → `layout(location=K) out` (vertex) / `in` (fragment);
//! - `uniform sampler2D s;` → a `texture2D s` and a `sampler s_schedra_smp`
//!   with bindings; `texture2D(s,` → `texture(sampler2D(s,s_schedra_smp),`
//!   (likewise `samplerCube`/`textureCube`, `texture2DProj`, `texture2DLod`;
//!   in a vertex shader `texture2D(s, uv)` reads level 0: `textureLod(…, uv,0.0)`);
//! - `uniform T x;` → `layout(binding=K) uniform U_schedraK { T x; };`;
//! - `gl_FragColor` → `schedra_FragColor`, declared `layout(location=0) out vec4`;
//! - a sampler as a function parameter, `sampler2D s` → `texture2D s, sampler
//!   s_schedra_smp`, and a sampler passed as an argument, `f(s,` → `f(s,
//!   s_schedra_smp,`; the identifier `sampler` (a GLSL 450 keyword, free in
//!   ES 1.00) → `schedra_sampler`;
//! - `varying matN m;` (stage inputs and outputs cannot be matrices in
//!   naga) → a private `matN m` and N `vecN` varyings `m_schedra_cK` on
//!   consecutive locations; `main` becomes `schedra_main`, and a `main`
//!   appended on a line after the last copies the columns out after calling
//!   it (vertex) or in before calling it (fragment).

use std::collections::HashSet;

/// The rewritten text and the map back to the original columns.
#[derive(Debug, Clone)]
pub struct Rewrite {
    /// GLSL 450 text with the same lines as the original.
    pub text: String,
    /// Per line (0-based): anchors `(rewritten column, original column)`,
    /// both 1-based, in increasing rewritten column.
    anchors: Vec<Vec<(u32, u32)>>,
}

impl Rewrite {
    /// The original 1-based column of rewritten (line, col).
    pub fn original(&self, line: u32, col: u32) -> u32 {
        let Some(a) = self.anchors.get(line.saturating_sub(1) as usize) else { return col };
        match a.iter().rev().find(|(out, _)| *out <= col) {
            Some((out, orig)) => orig + (col - out),
            None => col,
        }
    }
}

/// Whether the text looks like GLSL ES 1.00 (no `#version`, or `#version 100`).
pub fn is_es(src: &str) -> bool {
    match src.lines().map(str::trim).find(|l| l.starts_with("#version")) {
        None => true,
        Some(l) => l.split_whitespace().nth(1) == Some("100"),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Other(&'a str),
    Space(&'a str),
}

/// Split one line into tokens; `in_comment` carries `/* */` state across
/// lines (comment text is returned as `Space`).
fn tokens<'a>(line: &'a str, in_comment: &mut bool) -> Vec<Tok<'a>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if *in_comment {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            if i < b.len() {
                i += 2;
                *in_comment = false;
            }
            out.push(Tok::Space(&line[start..i]));
            continue;
        }
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            out.push(Tok::Space(&line[i..]));
            break;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            *in_comment = true;
            i += 2;
            out.push(Tok::Space(&line[start..i]));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(&line[start..i]));
        } else if c.is_ascii_whitespace() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push(Tok::Space(&line[start..i]));
        } else {
            // one character (UTF-8 aware) of punctuation or a digit run
            let len = line[i..].chars().next().map_or(1, char::len_utf8);
            i += len;
            if c.is_ascii_digit() {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
            }
            out.push(Tok::Other(&line[start..i]));
        }
    }
    out
}

const SPACES: &str = "        ";

/// The suffix naming the sampler paired with a combined-sampler texture.
pub const SAMPLER_SUFFIX: &str = "_schedra_smp";
/// The name `gl_FragColor` becomes.
pub const FRAG_COLOR: &str = "schedra_FragColor";

struct Counters {
    location_in: u32,
    location_out: u32,
    binding: u32,
    /// Matrix varyings split into columns: (name, columns).
    matrices: Vec<(String, usize)>,
    /// Whether `main` is renamed (there are matrix varyings).
    wrap_main: bool,
}

/// The suffix of a matrix varying's column `k`.
pub const COLUMN_SUFFIX: &str = "_schedra_c";

/// The spelling of an ES identifier in the rewritten text.
fn es_name(s: &str) -> &str {
    match s {
        "sampler" => "schedra_sampler",
        other => other,
    }
}

/// The columns of an ES matrix type (`mat2`, `mat3`, `mat4`).
fn matrix_columns(ty: &str) -> Option<usize> {
    match ty {
        "mat2" => Some(2),
        "mat3" => Some(3),
        "mat4" => Some(4),
        _ => None,
    }
}

/// The idents of a token line, precision qualifiers left out.
fn idents<'a>(l: &[Tok<'a>]) -> Vec<&'a str> {
    l.iter().filter_map(|t| if let Tok::Ident(s) = t { Some(*s) } else { None }).filter(|s| !is_precision(s)).collect()
}

/// The appended `main` of a shader with matrix varyings.
fn wrapper(fragment: bool, matrices: &[(String, usize)]) -> String {
    let cols = |name: &str, n: usize| (0..n).map(|k| format!("{name}{COLUMN_SUFFIX}{k}")).collect::<Vec<_>>();
    let mut body = String::new();
    if fragment {
        for (m, n) in matrices {
            body.push_str(&format!("{m} = mat{n}({}); ", cols(m, *n).join(", ")));
        }
        body.push_str("schedra_main();");
    } else {
        body.push_str("schedra_main();");
        for (m, n) in matrices {
            for (k, c) in cols(m, *n).iter().enumerate() {
                body.push_str(&format!(" {c} = {m}[{k}];"));
            }
        }
    }
    format!("void main() {{ {body} }}")
}

/// Rewrite ES 1.00 text for `fragment` (true) or vertex shaders.
pub fn rewrite(src: &str, fragment: bool) -> Rewrite {
    let mut n = Counters { location_in: 0, location_out: 0, binding: 0, matrices: Vec::new(), wrap_main: false };
    let mut samplers: HashSet<String> = HashSet::new();
    let mut in_comment = false;
    let mut lines: Vec<Vec<Tok>> = src.split('\n').map(|l| tokens(l, &mut in_comment)).collect();
    let uses_frag_color = lines.iter().flatten().any(|t| *t == Tok::Ident("gl_FragColor"));
    // First pass: sampler names, uniforms and parameters (for the
    // texture2D rewrite anywhere), and whether a varying is a matrix.
    for l in &lines {
        let ids = idents(l);
        if let Some(p) = ids.iter().position(|s| *s == "uniform") {
            if matches!(ids.get(p + 1), Some(&"sampler2D") | Some(&"samplerCube")) {
                ids.iter().skip(p + 2).for_each(|s| {
                    samplers.insert(s.to_string());
                });
            }
        }
        for w in ids.windows(2) {
            if matches!(w[0], "sampler2D" | "samplerCube") {
                samplers.insert(w[1].to_string());
            }
            if w[0] == "varying" && matrix_columns(w[1]).is_some() {
                n.wrap_main = true;
            }
        }
    }
    let mut text = String::with_capacity(src.len() + 512);
    let mut anchors = Vec::with_capacity(lines.len());
    let mut declared_frag_color = false;
    let mut in_comment = false;
    for (li, raw) in src.split('\n').enumerate() {
        let starts_in_comment = in_comment;
        let _ = tokens(raw, &mut in_comment);
        let toks = std::mem::take(&mut lines[li]);
        let mut out = String::new();
        let mut anc: Vec<(u32, u32)> = Vec::new();
        let is_directive = raw.trim_start().starts_with('#');
        if !declared_frag_color && uses_frag_color && fragment && !is_directive && !starts_in_comment {
            out.push_str(&format!("layout(location=0) out vec4 {FRAG_COLOR}; "));
            declared_frag_color = true;
        }
        if is_directive {
            anc.push((out.len() as u32 + 1, 1));
            out.push_str(raw);
        } else {
            rewrite_line(&toks, fragment, &mut n, &samplers, &mut out, &mut anc);
        }
        if li > 0 {
            text.push('\n');
        }
        text.push_str(&out);
        anchors.push(anc);
    }
    if n.wrap_main {
        text.push('\n');
        text.push_str(&wrapper(fragment, &n.matrices));
        anchors.push(Vec::new());
    }
    Rewrite { text, anchors }
}

fn is_precision(s: &str) -> bool {
    matches!(s, "highp" | "mediump" | "lowp")
}

/// Rewrite the tokens of one line into `out`, recording column anchors.
fn rewrite_line(toks: &[Tok], fragment: bool, n: &mut Counters, samplers: &HashSet<String>, out: &mut String, anc: &mut Vec<(u32, u32)>) {
    // precision qualifiers mean nothing to the lowering (every value is a
    // 32-bit word) and naga rejects them in several positions: blanked
    let blanked: Vec<Tok> = toks.iter().map(|t| match t {
        Tok::Ident(q) if is_precision(q) => Tok::Space(&SPACES[..q.len()]),
        other => other.clone(),
    }).collect();
    let toks = &blanked[..];
    let mut orig_col = 1u32;
    let mut i = 0;
    // Index of the `;` that closes a uniform block opened on this line.
    let mut close_block_at: Option<usize> = None;
    // Indices of `)` closing a vertex-stage sample that gains an explicit LOD.
    let mut lod_at: Vec<usize> = Vec::new();
    let next_ident = |from: usize| toks.iter().enumerate().skip(from).find(|(_, t)| !matches!(t, Tok::Space(_))).map(|(k, t)| (k, t.clone()));
    while i < toks.len() {
        let t = &toks[i];
        let s = match t {
            Tok::Ident(s) | Tok::Other(s) | Tok::Space(s) => *s,
        };
        anc.push((out.len() as u32 + 1, orig_col));
        let width = s.chars().count() as u32;
        match t {
            Tok::Ident("precision") => {
                // blank out up to and including the `;`
                let mut j = i;
                let mut cols = 0;
                while j < toks.len() {
                    let tj = match &toks[j] {
                        Tok::Ident(s) | Tok::Other(s) | Tok::Space(s) => *s,
                    };
                    cols += tj.chars().count() as u32;
                    j += 1;
                    if tj == ";" {
                        break;
                    }
                }
                out.push_str(&" ".repeat(cols as usize));
                orig_col += cols;
                i = j;
                continue;
            }
            Tok::Ident("attribute") => {
                out.push_str(&format!("layout(location={}) in", n.location_in));
                n.location_in += 1;
            }
            Tok::Ident("varying") if matrix_varying(toks, i).is_some() => {
                let (ty, name, end) = matrix_varying(toks, i).unwrap_or(("", "", i));
                let cols = matrix_columns(ty).unwrap_or(0);
                out.push_str(&format!("{ty} {name};"));
                for k in 0..cols {
                    let (dir, loc) = if fragment {
                        n.location_in += 1;
                        ("in", n.location_in - 1)
                    } else {
                        n.location_out += 1;
                        ("out", n.location_out - 1)
                    };
                    out.push_str(&format!(" layout(location={loc}) {dir} vec{cols} {name}{COLUMN_SUFFIX}{k};"));
                }
                n.matrices.push((name.to_string(), cols));
                for tk in &toks[i..=end] {
                    orig_col += tok_str(tk).chars().count() as u32;
                }
                i = end + 1;
                continue;
            }
            Tok::Ident("main") if n.wrap_main => out.push_str("schedra_main"),
            Tok::Ident(ty @ ("sampler2D" | "samplerCube")) if prev_tok(toks, i).is_some_and(|t| t == Tok::Other("(") || t == Tok::Other(",")) => {
                // a sampler parameter: a texture and a sampler
                let img = if *ty == "sampler2D" { "texture2D" } else { "textureCube" };
                match next_ident(i + 1) {
                    Some((j, Tok::Ident(name))) => {
                        out.push_str(img);
                        for tk in &toks[i + 1..j] {
                            out.push_str(tok_str(tk));
                        }
                        out.push_str(&format!("{nm}, sampler {nm}{SAMPLER_SUFFIX}", nm = es_name(name)));
                        for tk in &toks[i..=j] {
                            orig_col += tok_str(tk).chars().count() as u32;
                        }
                        i = j + 1;
                        continue;
                    }
                    _ => out.push_str(s),
                }
            }
            Tok::Ident(name) if samplers.contains(*name) && is_argument(toks, i) => {
                // a sampler passed to a function: its texture and its sampler
                out.push_str(&format!("{nm}, {nm}{SAMPLER_SUFFIX}", nm = es_name(name)));
            }
            Tok::Ident("sampler") => out.push_str(es_name("sampler")),
            Tok::Ident("varying") => {
                if fragment {
                    out.push_str(&format!("layout(location={}) in", n.location_in));
                    n.location_in += 1;
                } else {
                    out.push_str(&format!("layout(location={}) out", n.location_out));
                    n.location_out += 1;
                }
            }
            Tok::Ident("gl_FragColor") => out.push_str(FRAG_COLOR),
            Tok::Ident("uniform") => {
                // the type: skip precision qualifiers
                let mut k = i + 1;
                let mut ty = None;
                while let Some((j, tj)) = next_ident(k) {
                    match tj {
                        Tok::Ident(q) if is_precision(q) => k = j + 1,
                        Tok::Ident(q) => {
                            ty = Some((j, q));
                            break;
                        }
                        _ => break,
                    }
                }
                match ty {
                    Some((j, tyname @ ("sampler2D" | "samplerCube"))) => {
                        let img = if tyname == "sampler2D" { "texture2D" } else { "textureCube" };
                        let name = match next_ident(j + 1) {
                            Some((_, Tok::Ident(nm))) => nm,
                            _ => "",
                        };
                        out.push_str(&format!(
                            "layout(set=0,binding={}) uniform sampler {name}{SAMPLER_SUFFIX}; layout(set=0,binding={}) uniform",
                            n.binding,
                            n.binding + 1
                        ));
                        n.binding += 2;
                        // replace the type token
                        for tk in &toks[i + 1..j] {
                            let s = tok_str(tk);
                            out.push_str(s);
                            orig_col += s.chars().count() as u32;
                        }
                        orig_col += width;
                        anc.push((out.len() as u32 + 1, orig_col));
                        out.push_str(img);
                        orig_col += tyname.len() as u32;
                        i = j + 1;
                        continue;
                    }
                    Some(_) => {
                        out.push_str(&format!("layout(set=0,binding={}) uniform U_schedra{} {{", n.binding, n.binding));
                        n.binding += 1;
                        close_block_at = toks.iter().enumerate().skip(i).find(|(_, t)| **t == Tok::Other(";")).map(|(k, _)| k);
                    }
                    None => out.push_str(s),
                }
            }
            Tok::Ident(f @ ("texture2D" | "textureCube" | "texture2DProj" | "texture2DLod")) if next_ident(i + 1).is_some_and(|(_, t)| t == Tok::Other("(")) => {
                // a vertex shader has no derivatives: its samples read level 0
                let implicit = matches!(*f, "texture2D" | "textureCube") && !fragment;
                if implicit {
                    if let Some(close) = closing_paren(toks, i) {
                        lod_at.push(close);
                    }
                }
                let (func, comb) = match *f {
                    _ if implicit && *f == "texture2D" => ("textureLod", "sampler2D"),
                    _ if implicit => ("textureLod", "samplerCube"),
                    "texture2D" => ("texture", "sampler2D"),
                    "textureCube" => ("texture", "samplerCube"),
                    "texture2DLod" => ("textureLod", "sampler2D"),
                    _ => ("textureProj", "sampler2D"),
                };
                // texture2D ( s , → texture(sampler2D(s,s_smp),
                let paren = next_ident(i + 1).map(|(k, _)| k);
                let arg = paren.and_then(|p| next_ident(p + 1));
                match arg {
                    Some((a, Tok::Ident(name))) if samplers.contains(name) => {
                        out.push_str(&format!("{func}({comb}({nm},{nm}{SAMPLER_SUFFIX})", nm = es_name(name)));
                        for tk in &toks[i..=a] {
                            orig_col += tok_str(tk).chars().count() as u32;
                        }
                        i = a + 1;
                        continue;
                    }
                    _ => out.push_str(func),
                }
            }
            Tok::Other(")") if lod_at.contains(&i) => out.push_str(",0.0)"),
            Tok::Other(";") if close_block_at == Some(i) => {
                out.push_str("; };");
                close_block_at = None;
            }
            _ => out.push_str(s),
        }
        orig_col += width;
        i += 1;
    }
}

/// `varying [precision] matN name ;` starting at `i`: (type, name, index of `;`).
fn matrix_varying<'a>(toks: &[Tok<'a>], i: usize) -> Option<(&'a str, &'a str, usize)> {
    let mut rest = toks.iter().enumerate().skip(i + 1).filter(|(_, t)| !matches!(t, Tok::Space(_)));
    let ty = match rest.next()? {
        (_, Tok::Ident(t)) if matrix_columns(t).is_some() => *t,
        _ => return None,
    };
    let name = match rest.next()? {
        (_, Tok::Ident(nm)) => *nm,
        _ => return None,
    };
    match rest.next()? {
        (k, Tok::Other(";")) => Some((ty, name, k)),
        _ => None,
    }
}

/// The token before `i` that is not blank.
fn prev_tok<'a>(toks: &[Tok<'a>], i: usize) -> Option<Tok<'a>> {
    toks[..i].iter().rev().find(|t| !matches!(t, Tok::Space(_))).cloned()
}

/// Whether the identifier at `i` is a whole call argument: `(` or `,`
/// before it and `,` or `)` after it.
fn is_argument(toks: &[Tok], i: usize) -> bool {
    let next = toks.iter().skip(i + 1).find(|t| !matches!(t, Tok::Space(_)));
    matches!(prev_tok(toks, i), Some(Tok::Other("(" | ","))) && matches!(next, Some(Tok::Other(")" | ",")))
}

/// The index of the `)` closing the call whose name is at `name`, on this line.
fn closing_paren(toks: &[Tok], name: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(name + 1) {
        match t {
            Tok::Other("(") => depth += 1,
            Tok::Other(")") => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

fn tok_str<'a>(t: &Tok<'a>) -> &'a str {
    match t {
        Tok::Ident(s) | Tok::Other(s) | Tok::Space(s) => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_become_glsl450() {
        let src = "precision mediump float;\nattribute vec3 p;\nuniform mat4 m;\nvarying vec2 uv;\nvoid main(void) { uv = p.xy; gl_Position = m * vec4(p, 1.0); }\n";
        let r = rewrite(src, false);
        let lines: Vec<&str> = r.text.split('\n').collect();
        assert_eq!(lines.len(), src.split('\n').count());
        assert!(!lines[0].contains("precision"));
        assert!(lines[1].contains("layout(location=0) in vec3 p;"), "{}", lines[1]);
        assert!(lines[2].contains("uniform U_schedra0 { mat4 m; };"), "{}", lines[2]);
        assert!(lines[3].contains("layout(location=0) out vec2 uv;"), "{}", lines[3]);
    }

    #[test]
    fn fragment_samplers_and_colour() {
        let src = "uniform sampler2D tex;\nvarying vec2 uv;\nvoid main() {\n  gl_FragColor = texture2D(tex, uv);\n}";
        let r = rewrite(src, true);
        assert!(r.text.contains("uniform sampler tex_schedra_smp;"), "{}", r.text);
        assert!(r.text.contains("uniform texture2D tex;"), "{}", r.text);
        assert!(r.text.contains("texture(sampler2D(tex,tex_schedra_smp), uv)"), "{}", r.text);
        assert!(r.text.contains("out vec4 schedra_FragColor;"));
        assert!(r.text.contains("schedra_FragColor = texture"));
        // the `uv` argument on line 4 keeps its original column
        let line4 = r.text.split('\n').nth(3).unwrap_or("");
        let col = line4.find("uv)").map_or(0, |c| c as u32 + 1);
        assert_eq!(r.original(4, col), "  gl_FragColor = texture2D(tex, uv);".find("uv").map_or(0, |c| c as u32 + 1));
    }

    #[test]
    fn vertex_samples_read_level_zero() {
        let src = "uniform sampler2D h;\nattribute vec2 uv;\nvoid main() { gl_Position = vec4(texture2D(h, uv * (2.0)).x); }";
        let r = rewrite(src, false);
        assert!(r.text.contains("textureLod(sampler2D(h,h_schedra_smp), uv * (2.0),0.0)"), "{}", r.text);
    }

    #[test]
    fn comments_are_left_alone() {
        let src = "/* attribute varying\n uniform */ varying vec4 c; // attribute\nvoid main() { gl_FragColor = c; }";
        let r = rewrite(src, true);
        let first = r.text.split('\n').next().unwrap_or("");
        assert!(first.ends_with("/* attribute varying"), "{first}");
        assert!(r.text.contains("\n uniform */ layout"), "{}", r.text);
        assert!(r.text.contains("layout(location=0) in vec4 c; // attribute"), "{}", r.text);
    }

    #[test]
    fn matrix_varyings_become_columns() {
        let src = "attribute vec4 p;\nvarying mat4 m;\nvoid main() { m = mat4(p, p, p, p); gl_Position = p; }";
        let v = rewrite(src, false);
        assert!(v.text.contains("mat4 m; layout(location=0) out vec4 m_schedra_c0; layout(location=1) out vec4 m_schedra_c1;"), "{}", v.text);
        assert!(v.text.contains("void schedra_main()"), "{}", v.text);
        assert!(v.text.ends_with("\nvoid main() { schedra_main(); m_schedra_c0 = m[0]; m_schedra_c1 = m[1]; m_schedra_c2 = m[2]; m_schedra_c3 = m[3]; }"), "{}", v.text);
        let f = rewrite("varying vec2 uv;\nvarying mat3 m;\nvoid main() { gl_FragColor = vec4(m * vec3(uv, 1.0), 1.0); }", true);
        assert!(f.text.contains("layout(location=1) in vec3 m_schedra_c0;") && f.text.contains("layout(location=3) in vec3 m_schedra_c2;"), "{}", f.text);
        assert!(f.text.ends_with("void main() { m = mat3(m_schedra_c0, m_schedra_c1, m_schedra_c2); schedra_main(); }"), "{}", f.text);
        assert_eq!(f.text.split('\n').count(), 4, "one line appended, the others kept");
    }

    #[test]
    fn samplers_pass_through_functions() {
        let src = "uniform sampler2D t;\nvec4 f(sampler2D sampler, vec2 uv) { return texture2D(sampler, uv); }\nvoid main() { gl_FragColor = f(t, vec2(0.5)); }";
        let r = rewrite(src, true);
        assert!(r.text.contains("vec4 f(texture2D schedra_sampler, sampler schedra_sampler_schedra_smp, vec2 uv)"), "{}", r.text);
        assert!(r.text.contains("texture(sampler2D(schedra_sampler,schedra_sampler_schedra_smp), uv)"), "{}", r.text);
        assert!(r.text.contains("f(t, t_schedra_smp, vec2(0.5))"), "{}", r.text);
    }

    #[test]
    fn version_detection() {
        assert!(is_es("void main(){}"));
        assert!(is_es("#version 100\nvoid main(){}"));
        assert!(!is_es("#version 450\nvoid main(){}"));
    }
}
