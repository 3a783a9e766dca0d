//! The lexer of the text format: UTF-8 check of the whole text, then one
//! line at a time → [`Token`]s with 1-based columns.
//!
//! Algorithm: a single left-to-right pass over the bytes of a line; every
//! byte is looked at a bounded number of times, so lexing is linear in the
//! input whatever it holds. Invariant: every token and every error carries
//! the 1-based line and column where it starts. Outside comments only ASCII
//! is accepted, so the byte offset + 1 of a position before the first
//! non-ASCII character is also its character column.
//!
//! Numbers are interpreted here (so that their errors point at them):
//! integers must fit in i32 or u32, float literals become IEEE-754 single
//! bits and must be finite. Size suffixes (`:N`) are attached to the
//! register token they follow and must be 1..=255.

use crate::error::Located;
use crate::ir::{Imm, Span};

/// One token of a line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tok<'a> {
    /// `[A-Za-z_][A-Za-z0-9_.]*`: keyword, opcode, label, slot or name.
    Ident(&'a str),
    /// `%name[:N]`: the name without `%`, and the size suffix.
    Virt(&'a str, Option<u8>),
    /// `$name[:N]`: the register name without `$`, and the size suffix.
    Phys(&'a str, Option<u8>),
    /// An integer or float literal.
    Imm(Imm),
    /// One of `{ } ; : , =`.
    Punct(u8),
    /// `^unit.distance`: the unit name and the distance.
    Bypass(&'a str, u8),
}

/// A token and where it starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Token<'a> {
    /// The token.
    pub tok: Tok<'a>,
    /// Where it starts.
    pub span: Span,
}

/// Convert a byte count into a saturating `u32` position.
pub fn pos(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Check that `text` is UTF-8; the error points at the first invalid byte.
pub fn utf8(text: &[u8]) -> Result<&str, Located> {
    match std::str::from_utf8(text) {
        Ok(s) => Ok(s),
        Err(e) => {
            let good = text.get(..e.valid_up_to()).unwrap_or(&[]);
            // The prefix is valid UTF-8 by construction.
            let prefix = std::str::from_utf8(good).unwrap_or("");
            let line = prefix.bytes().filter(|b| *b == b'\n').count() + 1;
            let last = prefix.rsplit('\n').next().unwrap_or("");
            let col = last.chars().count() + 1;
            let byte = text.get(e.valid_up_to()).copied().unwrap_or(0);
            Err(Located::new(
                Span::new(pos(line), pos(col)),
                format!("invalid UTF-8 byte 0x{byte:02x}; expected UTF-8 text"),
            ))
        }
    }
}

/// A short, printable rendering of a piece of input for messages.
pub fn show(s: &str) -> String {
    let mut out: String = s.chars().take(32).collect();
    if s.chars().nth(32).is_some() {
        out.push('…');
    }
    out
}

fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// Lex one line (without its `\n`) numbered `line`.
pub fn lex_line(text: &str, line: u32) -> Result<Vec<Token<'_>>, Located> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let span = Span::new(line, pos(i + 1));
        let (tok, next) = match c {
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' => break,
            b'{' | b'}' | b';' | b':' | b',' | b'=' => (Tok::Punct(c), i + 1),
            b'%' | b'$' => lex_reg(text, i, span)?,
            b'^' => lex_bypass(text, i, span)?,
            b'-' | b'0'..=b'9' => lex_number(text, i, span)?,
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let end = ident_end(b, i);
                (Tok::Ident(&text[i..end]), end)
            }
            _ => return Err(unexpected(text, i, span)),
        };
        out.push(Token { tok, span });
        i = next;
    }
    Ok(out)
}

/// The end of an identifier starting at `i`: name bytes, and a `-` only
/// between a letter or digit and a letter (target names such as `lima-gp`).
fn ident_end(b: &[u8], i: usize) -> usize {
    let mut end = scan(b, i, name_byte);
    while b.get(end) == Some(&b'-') && b.get(end + 1).is_some_and(u8::is_ascii_alphabetic) && end > 0 && b.get(end - 1).is_some_and(u8::is_ascii_alphanumeric) {
        end = scan(b, end + 1, name_byte);
    }
    end
}

/// The first index at or after `i` whose byte does not satisfy `f`.
fn scan(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while b.get(i).is_some_and(|&x| f(x)) {
        i += 1;
    }
    i
}

fn unexpected(text: &str, i: usize, span: Span) -> Located {
    let ch = text.get(i..).and_then(|s| s.chars().next()).unwrap_or('\0');
    let what = match ch {
        '\0' => "NUL byte".to_string(),
        c if c.is_control() => format!("control character 0x{:02x}", c as u32),
        c => format!("character `{c}`"),
    };
    Located::new(span, format!("unexpected {what}; expected a name, register, number, `#` comment or one of `{{ }} ; : , =`"))
}

/// `%name[:N]` or `$name[:N]` starting at `i`.
fn lex_reg(text: &str, i: usize, span: Span) -> Result<(Tok<'_>, usize), Located> {
    let b = text.as_bytes();
    let sigil = b.get(i).copied().unwrap_or(b'%');
    let end = scan(b, i + 1, name_byte);
    let name = &text[i + 1..end];
    if name.is_empty() {
        return Err(Located::new(span, format!("expected a register name after `{}`", sigil as char)));
    }
    if sigil == b'%' && !virt_name_ok(name) {
        return Err(Located::new(span, format!("virtual register `%{}` must be digits or an identifier", show(name))));
    }
    let (size, next) = lex_suffix(text, end, span.line)?;
    let tok = if sigil == b'%' { Tok::Virt(name, size) } else { Tok::Phys(name, size) };
    Ok((tok, next))
}

/// `^unit.distance` starting at `i`: the name runs like an identifier and
/// its last `.`-separated part is the distance (0..=255).
fn lex_bypass(text: &str, i: usize, span: Span) -> Result<(Tok<'_>, usize), Located> {
    let b = text.as_bytes();
    let end = scan(b, i + 1, name_byte);
    let name = &text[i + 1..end];
    let expected = || Located::new(span, format!("bypass read `^{}` must be a unit and a distance, as in `^add0.1`", show(name)));
    let (unit, dist) = name.rsplit_once('.').ok_or_else(expected)?;
    let unit_ok = unit.as_bytes().first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
    if !unit_ok || dist.is_empty() || !dist.bytes().all(|d| d.is_ascii_digit()) {
        return Err(expected());
    }
    let dist = dist.parse::<u8>().map_err(|_| Located::new(span, format!("bypass distance in `^{}` must be a number from 0 to 255", show(name))))?;
    Ok((Tok::Bypass(unit, dist), end))
}

fn virt_name_ok(name: &str) -> bool {
    let b = name.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_digit() => b.iter().all(u8::is_ascii_digit),
        Some(c) => c.is_ascii_alphabetic() || *c == b'_',
        None => false,
    }
}

/// A `:N` suffix at `i` (only when a digit follows the colon).
fn lex_suffix(text: &str, i: usize, line: u32) -> Result<(Option<u8>, usize), Located> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b':') || !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        return Ok((None, i));
    }
    let end = scan(b, i + 1, name_byte);
    let digits = &text[i + 1..end];
    let span = Span::new(line, pos(i + 1));
    match digits.parse::<u8>() {
        Ok(n) if n >= 1 && digits.bytes().all(|d| d.is_ascii_digit()) => Ok((Some(n), end)),
        _ => Err(Located::new(span, format!("size suffix `:{}` must be a number from 1 to 255", show(digits)))),
    }
}

/// A number literal starting at `i` (a digit or `-`).
fn lex_number(text: &str, i: usize, span: Span) -> Result<(Tok<'_>, usize), Located> {
    let b = text.as_bytes();
    let start = if b.get(i) == Some(&b'-') { i + 1 } else { i };
    if !b.get(start).is_some_and(u8::is_ascii_digit) {
        return Err(Located::new(span, "expected a digit after `-`"));
    }
    let hex = matches!(b.get(start..start + 2), Some(b"0x") | Some(b"0X"));
    let mut end = start;
    while let Some(&c) = b.get(end) {
        let after_e = end > start && matches!(b.get(end - 1), Some(b'e') | Some(b'E'));
        let sign_after_exp = (c == b'+' || c == b'-') && !hex && after_e;
        if !(name_byte(c) || sign_after_exp) {
            break;
        }
        end += 1;
    }
    let lit = &text[i..end];
    let body = &text[start..end];
    let neg = start > i;
    let imm = if hex {
        integer(&body[2..], 16, neg)
    } else if body.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        float(lit, body)
    } else {
        integer(body, 10, neg)
    };
    imm.map(|m| (Tok::Imm(m), end)).map_err(|msg| Located::new(span, format!("{msg} `{}`", show(lit))))
}

/// An integer in `radix` that must fit in i32 (negative) or u32.
fn integer(digits: &str, radix: u32, neg: bool) -> Result<Imm, &'static str> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err("malformed number");
    }
    let mut v: u64 = 0;
    for c in digits.chars() {
        let d = u64::from(c.to_digit(radix).unwrap_or(0));
        v = v.checked_mul(u64::from(radix)).and_then(|v| v.checked_add(d)).ok_or("immediate fits neither i32 nor u32:")?;
        if v > u64::from(u32::MAX) {
            return Err("immediate fits neither i32 nor u32:");
        }
    }
    if neg {
        if v > 1 << 31 {
            return Err("immediate fits neither i32 nor u32:");
        }
        return Ok(Imm::int(-(v as i64)));
    }
    Ok(Imm::int(v as i64))
}

/// A float literal: `digits[.digits][e[+-]digits]` with a `.` or exponent.
fn float(lit: &str, body: &str) -> Result<Imm, &'static str> {
    let b = body.as_bytes();
    let mut i = scan(b, 0, |c| c.is_ascii_digit());
    if b.get(i) == Some(&b'.') {
        i = scan(b, i + 1, |c| c.is_ascii_digit());
    }
    if matches!(b.get(i), Some(b'e') | Some(b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        let j = scan(b, i, |c| c.is_ascii_digit());
        if j == i {
            return Err("malformed float literal");
        }
        i = j;
    }
    if i != b.len() {
        return Err("malformed number");
    }
    match lit.parse::<f32>() {
        Ok(f) if f.is_finite() => Ok(Imm::f32(f)),
        Ok(_) => Err("float literal is too large for single precision:"),
        Err(_) => Err("malformed float literal"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        lex_line(s, 1).unwrap().into_iter().map(|t| t.tok).collect()
    }
    fn err(s: &str) -> Located {
        lex_line(s, 3).unwrap_err()
    }

    #[test]
    fn registers_and_suffixes() {
        assert_eq!(toks("%a:2 $g12:2 %3 $R1.x"), vec![Tok::Virt("a", Some(2)), Tok::Phys("g12", Some(2)), Tok::Virt("3", None), Tok::Phys("R1.x", None)]);
        assert_eq!(toks("b0:"), vec![Tok::Ident("b0"), Tok::Punct(b':')]);
        assert_eq!(toks("target lima-gp"), vec![Tok::Ident("target"), Tok::Ident("lima-gp")]);
        assert_eq!(toks("a -1"), vec![Tok::Ident("a"), Tok::Imm(Imm::int(-1))]);
        assert_eq!(err("%x:0").span, Span::new(3, 3));
        assert!(err("%x:256").message.contains("1 to 255"));
        assert!(err("%3x").message.contains("digits or an identifier"));
    }

    #[test]
    fn bypass_reads() {
        assert_eq!(toks("^add0.1, ^reg0.x.0 ^complex.12"), vec![Tok::Bypass("add0", 1), Tok::Punct(b','), Tok::Bypass("reg0.x", 0), Tok::Bypass("complex", 12)]);
        assert!(err("^add0").message.contains("unit and a distance"));
        assert!(err("^add0.x").message.contains("unit and a distance"));
        assert!(err("^.1").message.contains("unit and a distance"));
        assert!(err("^add0.256").message.contains("0 to 255"));
        assert_eq!(err("  ^").span, Span::new(3, 3));
    }

    #[test]
    fn numbers() {
        assert_eq!(toks("-4 0x3f800000 4294967295 -2147483648"), vec![Tok::Imm(Imm::int(-4)), Tok::Imm(Imm { bits: 0x3f80_0000, float: false }), Tok::Imm(Imm::int(-1)), Tok::Imm(Imm::int(i32::MIN as i64))]);
        assert_eq!(toks("1.0 -0.5 2e3 1.5e-3"), vec![Tok::Imm(Imm::f32(1.0)), Tok::Imm(Imm::f32(-0.5)), Tok::Imm(Imm::f32(2000.0)), Tok::Imm(Imm::f32(1.5e-3))]);
        assert!(err("4294967296").message.contains("neither i32 nor u32"));
        assert!(err("-2147483649").message.contains("neither i32 nor u32"));
        assert!(err("99999999999999999999999999999").message.contains("neither"));
        assert!(err("1e39").message.contains("too large"));
        assert!(err("0x").message.contains("malformed"));
        assert!(err("12ab").message.contains("malformed"));
        assert_eq!(err("  -x").span, Span::new(3, 3));
    }

    #[test]
    fn comments_and_bad_bytes() {
        assert_eq!(toks("end # é ∀ \0"), vec![Tok::Ident("end")]);
        assert_eq!(err("ab \0").span, Span::new(3, 4));
        assert!(err("é").message.contains("`é`"));
        let e = utf8(b"a\nbc\xff").unwrap_err();
        assert_eq!(e.span, Span::new(2, 3));
        let e = utf8(b"\xc3\xa9\n\xc3\xa9x\xff").unwrap_err();
        assert_eq!(e.span, Span::new(2, 3));
    }
}
