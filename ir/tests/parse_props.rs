//! Property tests of the parser with bolero: on arbitrary bytes and on
//! "token soups" (random sequences of real tokens of the format, behind a
//! valid or absent header) the parser never panics, every error has a
//! position (line >= 1, col >= 1), and every text it accepts round-trips
//! through the printer (`parse(print(p))` same as `p`, `print` a fixed
//! point) and is validated without panicking. Each test counts the runs of
//! its body and fails if it ran fewer than 100 times (bolero's default
//! `Vec` generator stays under 64 elements, so the lengths are set
//! explicitly), so that a generator
//! that silently yields nothing cannot make the test pass.

use schedra_ir::{parse::parse, print::print, validate::validate, Located};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The property every input must satisfy.
fn property(text: &[u8]) {
    match parse(text, None) {
        Err(e) => assert_located(&e, text),
        Ok(p) => {
            let once = print(&p);
            let q = match parse(once.as_bytes(), None) {
                Ok(q) => q,
                Err(e) => panic!("printed text does not parse: {e}\n{once}"),
            };
            assert!(q.same_as(&p), "parse(print(p)) differs from p for\n{once}");
            assert_eq!(print(&q), once, "print is not a fixed point");
            if let Err(e) = validate(&p) {
                assert_located(&e, text);
            }
        }
    }
}

fn assert_located(e: &Located, text: &[u8]) {
    assert!(e.span.line >= 1 && e.span.col >= 1, "error without position: {e:?} for {:?}", String::from_utf8_lossy(text));
    assert!(!e.message.is_empty() && !e.message.contains('\n'), "message must be one line: {e:?}");
}

static BYTES: AtomicUsize = AtomicUsize::new(0);
static SOUPS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn arbitrary_bytes_never_panic() {
    let producer = bolero::produce::<Vec<u8>>().with().len(0usize..2048);
    bolero::check!().with_generator(producer).with_max_len(1 << 16).with_iterations(3000).for_each(|bytes: &Vec<u8>| {
        BYTES.fetch_add(1, Ordering::Relaxed);
        property(bytes);
    });
    let n = BYTES.load(Ordering::Relaxed);
    assert!(n > 100, "the property body ran only {n} times");
}

const HEADERS: &[&str] = &[
    "",
    "target v3d71\n",
    "target gen8\n",
    "target r600\n",
    "target v3d71\nform machine\n",
    "target gen8\nform machine\n",
    "target r600\nform machine\n",
    "shader s\ntarget gen8\nstage fragment\ninput %x:2 = $g2:2\n",
];

const VOCAB: &[&str] = &[
    "\n", "\n", "\n", " ", "{", "}", ";", ":", ",", "=", "%x", "%y:2", "%3", "$rf3", "$rf0", "$g12:2", "$g127", "$R1.x", "$R3.w", "$bogus", "0", "-4",
    "0x3f800000", "1.5", "-0.5", "2e3", "99999999999", "b0", "b1", "b0:", "b1:", "end", "jmp", "brnz", "shader", "target", "stage", "form", "input",
    "machine", "source", "v3d71", "gen8", "r600", "vertex", "fragment", "add", "mul", "sig", "alu", "x", "t", "cf", "fadd", "fmul", "mov", "ldunif",
    "ldvary", "tlbw", "thrsw", "send.tex", "send.eot", "export", "mad", "# comment", "\0", "é", "\t",
];

#[test]
fn token_soups_never_panic() {
    let producer = bolero::produce::<Vec<u8>>().with().len(0usize..512);
    bolero::check!().with_generator(producer).with_max_len(1 << 16).with_iterations(5000).for_each(|picks: &Vec<u8>| {
        SOUPS.fetch_add(1, Ordering::Relaxed);
        let (first, rest) = picks.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        let mut text = HEADERS[first as usize % HEADERS.len()].to_string();
        for (k, &b) in rest.iter().enumerate() {
            text.push_str(VOCAB[b as usize % VOCAB.len()]);
            if k % 3 == 2 {
                text.push(' ');
            }
        }
        property(text.as_bytes());
    });
    let n = SOUPS.load(Ordering::Relaxed);
    assert!(n > 100, "the property body ran only {n} times");
}

const LITERALS: &[&str] = &[
    "0", "-1", "15", "-16", "1.0", "-0.0", "0.1", "1e-45", "7e-45", "3.4028235e38", "16777217.0", "1e20", "0xffffffff", "-2147483648", "4294967295",
    "0x7fc00000", "65536", "-65537",
];

/// Lines that parse in the given form (`{}` = a literal from [`LITERALS`]).
fn lines(target: &str, machine: bool) -> &'static [&'static str] {
    match (target, machine) {
        ("v3d71", false) => &["%a = ldunif 3", "%b = fadd %a, {}", "%c:1 = mov {}", "$rf5 = mov %a", "tlbw %b", "%d = frob %zz, b0, {}"],
        ("v3d71", true) => &["{ sig: ldunif 0 }", "{ add: mov $rf4, $rf0 ; sig: ldvary 0 }", "{ }", "{ mul: fmul $rf5, $rf4, {} }", "{ add: tlbw $rf5 ; sig: thrsw }", "{ q: frob $rf70, {} }"],
        ("gen8", false) => &["%y:2 = mul %x, %x", "%t:4 = send.tex %y", "send.eot %t", "$g20:2 = add %y, {}", "%s = mov {}"],
        ("gen8", true) => &["mul $g10:2, $g2:2, $g2:2", "send.scratch_read $g126:2, 0", "{ alu: mov $g4, {} }", "{ }", "{ alu: add $g4, $g4, 1 ; alu: mov $g5, 2 }", "frob"],
        (_, false) => &["$R1.x = mov %b", "export 0, $R1.x", "%c = muladd %a, {}, %b"],
        (_, true) => &["{ x: mov $R1.x, $R1.y ; y: mov $R1.y, {} }", "{ cf: export 0, $R1.x }", "{ t: recip $R2.z, $R127.w }", "{ }"],
    }
}

const TERMS: &[&str] = &["end", "jmp b0", "jmp b1", "brnz %x, b1, b2", "brnz $R1.x, b0, b1", "brnz {}, b2, b0"];

static LINES: AtomicUsize = AtomicUsize::new(0);
static PARSED: AtomicUsize = AtomicUsize::new(0);

/// Programs built from whole lines so that most of them parse: the printer
/// round trip is checked on each that does.
#[test]
fn line_soups_round_trip() {
    let producer = bolero::produce::<Vec<u8>>().with().len(0usize..160);
    bolero::check!().with_generator(producer).with_max_len(1 << 16).with_iterations(3000).for_each(|picks: &Vec<u8>| {
        LINES.fetch_add(1, Ordering::Relaxed);
        let mut it = picks.iter().map(|&b| b as usize);
        let head = it.next().unwrap_or(0);
        let (target, machine) = (["v3d71", "gen8", "r600"][head % 3], head / 3 % 2 == 1);
        let mut text = format!("target {target}\n{}input {}\nb0:\n", if machine { "form machine\n" } else { "" }, if machine { "$g2:2" } else { "%x = $R1.x" });
        let pick = |k: usize, from: &[&str]| from[k % from.len()].replace("{}", LITERALS[k / from.len() % LITERALS.len()]);
        let mut block = 0;
        while let Some(b) = it.next() {
            if b % 6 == 0 {
                block += 1;
                text += &format!("    {}\nb{block}:\n", pick(it.next().unwrap_or(0), TERMS));
            } else {
                text += &format!("    {}\n", pick(b, lines(target, machine)));
            }
        }
        text += "    end\n";
        if parse(text.as_bytes(), None).is_ok() {
            PARSED.fetch_add(1, Ordering::Relaxed);
        }
        property(text.as_bytes());
    });
    let (n, ok) = (LINES.load(Ordering::Relaxed), PARSED.load(Ordering::Relaxed));
    assert!(n > 100 && ok > 50, "the body ran {n} times and only {ok} programs parsed");
}

/// Pathological shapes, checked directly: long lines, many operands, deep
/// braces, huge numbers, many lines, NULs.
#[test]
fn pathological_inputs() {
    let many_ops = format!("target gen8\nform machine\nb0:\n mov {}\n end\n", vec!["$g2"; 100_000].join(", "));
    property(many_ops.as_bytes());
    let deep = format!("target v3d71\nform machine\nb0:\n {}\n end\n", "{".repeat(100_000));
    assert!(parse(deep.as_bytes(), None).is_err());
    let unbalanced = format!("target v3d71\nform machine\nb0:\n {}\n end\n", "}".repeat(100_000));
    assert!(parse(unbalanced.as_bytes(), None).is_err());
    let huge = format!("target v3d71\nb0:\n %a = mov {}\n end\n", "9".repeat(1_000_000));
    let e = parse(huge.as_bytes(), None).unwrap_err();
    assert_eq!((e.span.line, e.span.col), (3, 11));
    let long_float = format!("target v3d71\nb0:\n %a = mov 1.{}\n end\n", "0".repeat(1_000_000));
    property(long_float.as_bytes());
    let lines = format!("target v3d71\nb0:\n{}\n end\n", " %a = mov 1\n".repeat(100_000));
    property(lines.as_bytes());
    let chain = |n: usize| {
        let mut s = String::from("target v3d71\nb0:\n %a = ldunif 0\n jmp b1\n");
        for k in 1..n {
            s += &format!("b{k}:\n %v{k} = add %a, 1\n jmp b{}\n", k + 1);
        }
        s + &format!("b{n}:\n tlbw %a\n end\n")
    };
    let t = std::time::Instant::now();
    let p = parse(chain(5_000).as_bytes(), None).unwrap();
    assert_eq!(validate(&p), Ok(()));
    let p = parse(chain(20_000).as_bytes(), None).unwrap();
    let e = validate(&p).unwrap_err();
    assert!(e.message.contains("too large"), "20000 blocks × 20000 values is over the dataflow budget: {e}");
    assert!(t.elapsed().as_secs() < 10, "validation of long chains took {:?}", t.elapsed());
    property(b"\0\0\0");
    property(&[0xff; 10]);
    property(b"target v3d71\nb0:\n %a:99999 = mov 1\n end\n");
}
