//! The project's own shaders (corpus/shaders/*.wgsl, and SPIR-V written from
//! them by naga's SPIR-V back end): lowered for every target that runs
//! their stage, compiled in all four modes and proven; the rejected shaders
//! of corpus/shaders/bad fail with a location; arbitrary text never panics
//! the front end; the evaluator tells different inputs apart.

use schedra_compiler::{compile, Options, Ra, Sched};
use schedra_frontend::{check, lower, parse, FrontError};
use schedra_verify::{verify, VerifyOptions};
use std::path::PathBuf;

fn shaders_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/shaders")
}

fn files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).expect("corpus/shaders exists").flatten().map(|e| e.path()).filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "wgsl")).collect();
    v.sort();
    v
}

const MODES: [(Sched, Ra); 4] = [(Sched::TopDown, Ra::Split), (Sched::TopDown, Ra::Graph), (Sched::BottomUp, Ra::Split), (Sched::BottomUp, Ra::Graph)];

/// Lower `parsed` for every target that runs `stage`, compile in four modes
/// and prove each; returns how many (target, mode) pairs were proven.
fn prove_everywhere(name: &str, parsed: &parse::Parsed) -> usize {
    let ep = &parsed.module.entry_points[0];
    let stage = schedra_frontend::layout::stage_of(ep.stage).expect("a known stage");
    let mut proven = 0;
    for t in schedra_ir::target::all() {
        if !lower::supports(t, stage) {
            continue;
        }
        let req = lower::Request { entry: None, stage: None, name: Some(name.into()) };
        let p = match lower::lower(parsed, t, &req) {
            Ok(p) => p,
            Err(e) if e.message.contains("texture sampling is not supported") => continue,
            Err(e) => panic!("{name} on {}: {e}", t.name),
        };
        schedra_ir::validate::validate(&p).unwrap_or_else(|e| panic!("{name} on {}: {e}", t.name));
        let defined: usize = (0..10).map(|seed| check::check(parsed, t, &req, seed).unwrap_or_else(|e| panic!("{name} on {} seed {seed}: {e}", t.name))).sum();
        assert!(defined > 0, "{name} on {}: no defined output on 10 seeds", t.name);
        for (sched, ra) in MODES {
            let c = compile(&p, &Options { sched, ra, ..Options::default() }).unwrap_or_else(|e| panic!("{name} on {}: {e}", t.name));
            let r = verify(&p, &c.program, &VerifyOptions { timeout_ms: 20_000 });
            assert_eq!(r.exit_status(), 0, "{name} on {} ({sched:?}, {ra:?}) not proven", t.name);
            proven += 1;
        }
    }
    proven
}

#[test]
fn own_wgsl_shaders_lower_compile_and_prove() {
    let mut total = 0;
    for f in files(&shaders_dir()) {
        let p = f.to_string_lossy().to_string();
        let parsed = parse::parse(parse::Lang::Wgsl, &std::fs::read(&f).expect("readable"), None).unwrap_or_else(|e| panic!("{p}: {e}"));
        total += prove_everywhere(&p, &parsed);
    }
    // lit-vertex: v3d71, r600, kepler, lima-gp (with its branches);
    // cel-fragment: v3d71, r600, gen8, kepler; textured: gen8, kepler
    // (tex.2d), v3d71, r600
    assert_eq!(total, 4 * (4 + 4 + 4));
}

#[test]
fn glsl_shaders_lower_compile_and_prove() {
    // desktop GLSL 450 as naga reads it, and ES 1.00 in a `.glsl` file
    let dir = shaders_dir();
    let a = parse::parse(parse::Lang::Glsl, &std::fs::read(dir.join("phong-450.frag")).expect("readable"), Some(schedra_ir::Stage::Fragment)).expect("GLSL 450 parses");
    let b = parse::parse(parse::Lang::Glsl, &std::fs::read(dir.join("cel.glsl")).expect("readable"), Some(schedra_ir::Stage::Fragment)).expect("ES in .glsl parses");
    assert!(a.source.rewrite.is_none() && b.source.rewrite.is_some());
    assert_eq!(prove_everywhere("phong-450.frag", &a) + prove_everywhere("cel.glsl", &b), 2 * 4 * 4);
    let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
    let e = schedra_frontend::lower_file("cel.glsl", &std::fs::read(dir.join("cel.glsl")).expect("readable"), t, None, None).expect_err("no stage");
    assert!(e.message.contains("--stage"), "{e}");
}

#[test]
fn spirv_written_from_wgsl_lowers_compiles_and_proves() {
    let mut total = 0;
    for f in files(&shaders_dir()) {
        let text = std::fs::read_to_string(&f).expect("readable");
        let module = naga::front::wgsl::parse_str(&text).expect("the WGSL parses");
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all()).validate(&module).expect("valid");
        let words = naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None).expect("SPIR-V written");
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let parsed = parse::parse(parse::Lang::Spirv, &bytes, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        total += prove_everywhere(&format!("{}.spv", f.display()), &parsed);
    }
    assert_eq!(total, 4 * (4 + 4 + 4));
}

fn lower_path(path: &std::path::Path, target: &str) -> Result<schedra_ir::Program, FrontError> {
    let t = schedra_ir::target::by_name(target).expect("target");
    let p = path.to_string_lossy();
    schedra_frontend::lower_file(&p, &std::fs::read(path).expect("readable"), t, None, None)
}

#[test]
fn rejected_shaders_say_where_and_why() {
    let dir = shaders_dir().join("bad");
    // A texture in a vertex shader is an error where the vertex stage has no
    // texture path (lima-gp); v3d71, r600 and kepler sample there.
    let untextured: Vec<&str> = schedra_ir::target::all().iter().filter(|t| t.abi.is_some_and(|a| a.texture.is_none() && a.vertex.is_some())).map(|t| t.name).collect();
    assert_eq!(untextured, ["lima-gp"]);
    let both = ["v3d71", "r600"];
    let expect = [
        ("dynamic-loop.frag", (5, 25), "not known at compile time", &both[..]),
        ("recursion.frag", (3, 1), "is recursive", &both[..]),
        ("syntax.wgsl", (3, 35), "expected", &both[..]),
        ("texture-vertex.vert", (5, 28), "texture", &untextured[..]),
        ("unknown-builtin.frag", (4, 25), "frobnicate", &both[..]),
    ];
    for (file, (line, col), what, targets) in expect {
        for &t in targets {
            let e = lower_path(&dir.join(file), t).expect_err(file);
            assert_eq!((e.line, e.col), (line, col), "{file} on {t}: {e}");
            assert!(e.message.contains(what), "{file} on {t}: {e}");
        }
    }
}

#[test]
fn discard_lowers_compiles_and_proves_where_a_target_has_one() {
    let path = shaders_dir().join("discard.frag");
    let bytes = std::fs::read(&path).expect("readable");
    let parsed = parse::parse(parse::Lang::Glsl, &bytes, Some(schedra_ir::Stage::Fragment)).expect("parses");
    // v3d71, gen8, r600 and kepler, four modes each (lima-gp runs no
    // fragment shader)
    assert_eq!(prove_everywhere("discard.frag", &parsed), 4 * 4);
    let kills = [("v3d71", "setmsf.ifnz"), ("gen8", "halt.nz"), ("r600", "killne_int"), ("kepler", "kil.nz")];
    for (t, op) in kills {
        let p = lower_path(&path, t).expect("lowers");
        // `if (a < 0.5) discard;`: a branch to a block holding the discard
        let holding: Vec<&schedra_ir::Block> = p.blocks.iter().filter(|b| b.insts().iter().any(|i| i.opcode == op)).collect();
        assert_eq!(holding.len(), 1, "{t}:\n{p}");
        assert!(p.blocks.iter().any(|b| matches!(&b.term.kind, schedra_ir::TermKind::Brnz { nonzero, zero, .. } if *nonzero == holding[0].label || *zero == holding[0].label)), "{t}:\n{p}");
    }
    // On a fragment-running target that describes no discard the shader is
    // refused at the `discard`.
    let bare = schedra_ir::target::testing::without(schedra_ir::target::by_name("v3d71").expect("v3d71"), "v3d71-no-discard", schedra_ir::target::Sem::Discard);
    let e = schedra_frontend::lower_file("discard.frag", &bytes, bare, None, None).expect_err("no discard op");
    assert_eq!((e.line, e.col), (5, 9), "{e}");
    assert!(e.message.contains("describes no operation that discards a fragment"), "{e}");
}

#[test]
fn the_check_compares_what_a_discarded_fragment_leaves() {
    // The evaluator's effects of a discarded invocation: the discard alone.
    use schedra_fuzz::interp::Effects;
    let mut expected = Effects::new();
    expected.push("discard", vec![1.0f32.to_bits(), 0]);
    let mut got = Effects::new();
    got.push("discard", vec![0, 0]);
    got.push("discard", vec![1.0f32.to_bits(), 0]);
    got.push("tlb", vec![7]);
    let cut = check::discarded(&got, &expected);
    assert_eq!(check::compare(&expected, &cut), Ok(2));
    // A run that does not discard keeps its outputs, which then differ.
    let mut kept = Effects::new();
    kept.push("discard", vec![0, 0]);
    kept.push("tlb", vec![7]);
    assert!(check::compare(&expected, &check::discarded(&kept, &expected)).is_err());
    // A discard at another place differs.
    let mut late = Effects::new();
    late.push("tlb", vec![7]);
    late.push("discard", vec![1.0f32.to_bits(), 1]);
    assert!(check::compare(&expected, &check::discarded(&late, &expected)).is_err());
}

#[test]
fn a_texture_is_an_error_where_no_texture_op_exists() {
    // lima-gp, the one target without a texture path, runs vertex shaders
    // only: a textured vertex shader is the error there.
    let bad = shaders_dir().join("bad").join("texture-vertex.vert");
    let e = lower_path(&bad, "lima-gp").expect_err("no texture unit");
    assert_eq!((e.line, e.col), (5, 28));
    assert!(e.message.contains("texture sampling is not supported"), "{e}");
    let f = shaders_dir().join("textured-fragment.wgsl");
    for t in ["gen8", "v3d71", "r600", "kepler"] {
        assert!(lower_path(&f, t).is_ok(), "{t}");
    }
    // The texture's ops on each: gen8 and r600 one op over register runs,
    // v3d71 a T write, an S write that starts the lookup and four reads.
    let count = |t: &str, op: &str| lower_path(&f, t).map(|p| p.blocks.iter().flat_map(|b| b.insts()).filter(|i| i.opcode == op).count());
    assert_eq!((count("v3d71", "tmut"), count("v3d71", "tmus"), count("v3d71", "ldtmu")), (Ok(1), Ok(1), Ok(4)));
    assert_eq!(count("r600", "tex"), Ok(1));
}

#[test]
fn the_evaluator_tells_seeds_apart() {
    // The check can fail: the evaluator's effects for one seed differ from
    // the lowered program's run on another.
    let f = shaders_dir().join("lit-vertex.wgsl");
    let parsed = parse::parse(parse::Lang::Wgsl, &std::fs::read(&f).expect("readable"), None).expect("parses");
    let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
    let req = lower::Request::default();
    let layout = schedra_frontend::layout::layout(&parsed.module, &parsed.module.entry_points[0], t).expect("layout");
    let p = lower::lower(&parsed, t, &req).expect("lowers");
    // seeds whose outputs are defined (no NaN) for this shader
    let defined = |s: u64| {
        let e = check::evaluate(&parsed.module, &parsed.info, 0, &layout, t, s).expect("evaluates");
        let ok = e.iter().all(|(_, ws)| ws.iter().all(|w| !f32::from_bits(*w).is_nan()));
        ok.then_some(e)
    };
    let seeds: Vec<u64> = (0..50).filter(|s| defined(*s).is_some()).take(2).collect();
    assert_eq!(seeds.len(), 2, "two seeds with defined outputs");
    let run = schedra_fuzz::interp::source::run(&p, schedra_fuzz::interp::World::new(seeds[0]), 1_000_000).expect("runs");
    let same = defined(seeds[0]).expect("defined");
    let other = defined(seeds[1]).expect("defined");
    assert!(check::compare(&same, &run.effects).is_ok_and(|n| n > 0));
    assert!(check::compare(&other, &run.effects).is_err());
}

#[test]
fn arbitrary_text_never_panics_the_front_end() {
    bolero::check!().with_max_len(512).with_iterations(2000).for_each(|bytes: &[u8]| {
        let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
        for path in ["x.wgsl", "x.frag", "x.vert", "x.spv"] {
            let _ = schedra_frontend::lower_file(path, bytes, t, None, None);
        }
        // SPIR-V with a valid header (magic, version 1.0, generator, bound, schema)
        let mut spv: Vec<u8> = [0x0723_0203u32, 0x0001_0000, 0, 64, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        spv.extend_from_slice(&bytes[..bytes.len() / 4 * 4]);
        let _ = schedra_frontend::lower_file("x.spv", &spv, t, None, None);
    });
}

#[test]
fn glsl_keywords_in_arbitrary_order_never_panic() {
    // Text made of the rewrite's tokens reaches its corners faster than bytes.
    const WORDS: [&str; 22] = ["attribute", "varying", "uniform", "sampler2D", "texture2D", "(", ")", ";", "vec4", "x", "gl_FragColor", "=", "precision", "void main()", "{", "}", "mat4", "sampler", ",", "$MAIN$", "$DO_LIGHTS$", "main"];
    bolero::check!().with_max_len(64).with_iterations(300).for_each(|bytes: &[u8]| {
        let t = schedra_ir::target::by_name("r600").expect("r600");
        let text: Vec<&str> = bytes.iter().map(|b| WORDS[(*b as usize) % WORDS.len()]).collect();
        let src = text.join(" ");
        // glmark2's file names bring its additions (fills, constants) in
        for path in ["x.frag", "x.vert", "light-phong.frag", "conditionals.vert", "light-basic.vert"] {
            let _ = schedra_frontend::lower_file(path, src.as_bytes(), t, None, None);
        }
    });
}

#[test]
fn a_template_nothing_fills_is_a_located_error() {
    let t = schedra_ir::target::by_name("v3d71").expect("v3d71");
    let src = "varying vec4 c;\nvoid main(void)\n{\n    $BODY$\n    gl_FragColor = c;\n}\n";
    let e = schedra_frontend::lower_file("mine.frag", src.as_bytes(), t, None, None).expect_err("a placeholder");
    assert_eq!((e.line, e.col), (4, 5), "{e}");
    assert!(e.message.contains("`$BODY$` is a template placeholder"), "{e}");
    // glmark2's light-phong.frag fills `$DO_LIGHTS$`, not this one
    let e = schedra_frontend::lower_file("light-phong.frag", src.as_bytes(), t, None, None).expect_err("not glmark2's");
    assert!(e.message.contains("`$BODY$` has no value in glmark2's table"), "{e}");
    // a complete shader that happens to have a glmark2 name is left alone
    let own = "varying vec4 c;\nvoid main(void) { gl_FragColor = c * 2.0; }\n";
    assert!(schedra_frontend::lower_file("light-advanced.frag", own.as_bytes(), t, None, None).is_ok());
}

#[test]
fn asin_and_acos_agree_with_the_evaluator() {
    let src = "varying vec2 v;\nvoid main(void) {\n    gl_FragColor = vec4(asin(fract(v.x)), acos(fract(v.y) * 2.0 - 1.0), asin(-fract(v.y)), 1.0);\n}\n";
    let parsed = parse::parse(parse::Lang::Glsl, src.as_bytes(), Some(schedra_ir::Stage::Fragment)).expect("parses");
    for t in schedra_ir::target::all().iter().filter(|t| t.abi.is_some_and(|a| a.fragment.is_some())) {
        let req = lower::Request::default();
        let defined: usize = (0..10u64).map(|seed| check::check(&parsed, t, &req, seed).unwrap_or_else(|e| panic!("{} seed {seed}: {e}", t.name))).sum();
        assert!(defined >= 20, "{}: {defined} defined words", t.name);
    }
}

#[test]
fn unrolling_is_bounded() {
    // Nested loops whose unrolled body would exceed the instruction limit
    // stop with a located error instead of running away.
    let src = "@fragment fn main(@location(0) x: f32) -> @location(0) vec4<f32> {\n var s = x;\n for (var i = 0; i < 200; i++) {\n  for (var j = 0; j < 200; j++) {\n   for (var k = 0; k < 200; k++) { s = s * 1.01 + x; }\n  }\n }\n return vec4<f32>(s);\n}\n";
    let t = schedra_ir::target::by_name("r600").expect("r600");
    let e = schedra_frontend::lower_file("big.wgsl", src.as_bytes(), t, None, None).expect_err("too big");
    assert!(e.message.contains("exceeds"), "{e}");
    assert!(e.line >= 3, "{e}");
}

#[test]
fn mutated_spirv_never_panics_the_front_end() {
    // Words of a valid module overwritten at chosen places reach deep into
    // the SPIR-V parser and the lowering.
    let text = std::fs::read_to_string(shaders_dir().join("cel-fragment.wgsl")).expect("readable");
    let module = naga::front::wgsl::parse_str(&text).expect("parses");
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all()).validate(&module).expect("valid");
    let words = naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None).expect("SPIR-V");
    bolero::check!().with_max_len(64).with_iterations(2000).for_each(|edits: &[u8]| {
        let t = schedra_ir::target::by_name("gen8").expect("gen8");
        let mut w = words.clone();
        for e in edits.chunks(4) {
            if let [i, j, v, x] = e {
                let k = (usize::from(*i) << 8 | usize::from(*j)) % w.len();
                w[k] = u32::from(*v) << 8 | u32::from(*x);
            }
        }
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let _ = schedra_frontend::lower_file("x.spv", &bytes, t, None, None);
    });
}

/// The edits bolero found (version word and one later word zeroed) that made
/// naga's SPIR-V parser unwrap `None`: the front end reports an error.
#[test]
fn spirv_that_panics_naga_is_an_error() {
    // cel-fragment.wgsl written as SPIR-V by naga, with word 1 (the
    // version) and word 0x600 % n zeroed: naga 28's parser unwraps on it.
    let bytes = std::fs::read(shaders_dir().join("bad").join("naga-panic.spv")).expect("readable");
    for t in schedra_ir::target::all() {
        let e = schedra_frontend::lower_file("naga-panic.spv", &bytes, t, None, None).expect_err("malformed module");
        assert_eq!((e.line, e.col), (1, 1), "{e}");
        assert!(e.message.contains("SPIR-V: malformed module"), "{e}");
    }
}

static LOWERED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn mutated_wgsl_never_panics_the_lowering() {
    // Characters of the project's shaders overwritten: many mutants still
    // parse and validate, and reach the lowering with unusual constructs.
    const CHARS: &[u8] = b"0123456789.+-*/()<>=!xyzw,;{} ";
    let texts: Vec<String> = files(&shaders_dir()).iter().map(|f| std::fs::read_to_string(f).expect("readable")).collect();
    bolero::check!().with_max_len(32).with_iterations(3000).for_each(|edits: &[u8]| {
        let Some((first, rest)) = edits.split_first() else { return };
        let mut text = texts[usize::from(*first) % texts.len()].clone().into_bytes();
        for e in rest.chunks(3) {
            if let [i, j, c] = e {
                let k = (usize::from(*i) << 8 | usize::from(*j)) % text.len();
                text[k] = CHARS[usize::from(*c) % CHARS.len()];
            }
        }
        for t in schedra_ir::target::all() {
            if let Ok(p) = schedra_frontend::lower_file("x.wgsl", &text, t, None, None) {
                LOWERED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // what lowers is a valid source-form program
                if let Err(e) = schedra_ir::validate::validate(&p) {
                    panic!("{}: {e}\n{}", t.name, String::from_utf8_lossy(&text));
                }
            }
        }
    });
    // the property reached the lowering (mutants that still parse)
    assert!(LOWERED.load(std::sync::atomic::Ordering::Relaxed) > 0);
}
