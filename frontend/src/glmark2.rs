//! What glmark2 adds to its shaders at run time, so that its incomplete
//! shaders and its templates can be lowered as glmark2 compiles them.
//!
//! glmark2 ships shaders that do not compile on their own: before handing a
//! shader to the driver it declares constants (`ShaderSource::add_const`:
//! light positions, material colours, texture steps, blur kernels) and fills
//! `$NAME$` placeholders (`ShaderSource::replace`) with code, partly read
//! from the `.all` fragments beside the shaders. [`SHADERS`] is that table,
//! one entry per shader file name, with the values of one glmark2 benchmark
//! run (the scene and options named in the entry; glmark2's default
//! benchmark list where it has the shader, its 800×600 default window
//! otherwise).
//!
//! How they are applied ([`additions`]): only to a shader that does not
//! parse as it is (a complete shader with the same file name is left
//! alone). Each constant becomes a preprocessor macro expanding to its
//! value, which means what glmark2's `const` declaration means and keeps
//! every line of the file where it was; each placeholder is replaced by its
//! text joined onto the placeholder's line (fragments lose their `//`
//! comments), so errors keep their lines (an error inside a filled
//! placeholder is reported on the placeholder's line). A placeholder left
//! without a value, or a fragment file that is not beside the shader, is a
//! located error. Numbers are written as glmark2 writes them (`std::fixed`,
//! six decimals).
//!
//! The one variant choice that is not glmark2's default: `loop.vert` gets a
//! constant trip count of 5 (`vertex-uniform=false`); with glmark2's default
//! the count is the uniform `VertexLoops`, a loop the lowering (which
//! unrolls loops) cannot bound.

use crate::error::FrontError;
use std::path::Path;

/// One glmark2 shader's run-time additions.
#[derive(Debug)]
pub struct Shader {
    /// The shader's file name in glmark2's `data/shaders/`.
    pub file: &'static str,
    /// The glmark2 benchmark (scene and options) whose values these are.
    pub scene: &'static str,
    /// Constants glmark2 declares: (name, GLSL value).
    pub consts: &'static [(&'static str, &'static str)],
    /// Placeholders glmark2 fills: (`$NAME$`, what replaces it).
    pub fills: &'static [(&'static str, Fill)],
}

/// What a placeholder is replaced with.
#[derive(Debug)]
pub enum Fill {
    /// The fragment file beside the shader, repeated this many times.
    File(&'static str, usize),
    /// This text.
    Text(&'static str),
    /// Text glmark2 generates (a blur or convolution sum, a light loop).
    Generated(fn() -> String),
}

const LIGHT: (&str, &str) = ("LightSourcePosition", "vec4(20.000000, 20.000000, 10.000000, 1.000000)");
/// normalize(normalize(LIGHT.xyz) + (0, 0, 1)), as glmark2 computes it.
const HALF: (&str, &str) = ("LightSourceHalfVector", "vec3(0.408248, 0.408248, 0.816497)");
const WHITE: (&str, &str) = ("MaterialDiffuse", "vec4(1.000000, 1.000000, 1.000000, 1.000000)");

/// The table: every glmark2 shader that needs additions to compile.
pub const SHADERS: &[Shader] = &[
    Shader { file: "light-basic.vert", scene: "build (scene-build.cpp)", consts: &[LIGHT, WHITE], fills: &[] },
    Shader { file: "light-basic-texgen.vert", scene: "texture:texgen=true (scene-texture.cpp)", consts: &[("PI", "3.141593"), LIGHT, WHITE], fills: &[] },
    Shader { file: "pulsar-light.vert", scene: "pulsar:light=true (scene-pulsar.cpp)", consts: &[("LightSourcePosition", "vec4(-20.000000, 20.000000, -20.000000, 1.000000)")], fills: &[] },
    Shader { file: "shadow.vert", scene: "shadow (scene-shadow.cpp)", consts: &[("MaterialDiffuse", "vec4(0.300000, 0.300000, 0.300000, 1.000000)")], fills: &[] },
    Shader { file: "bump-height.frag", scene: "bump:bump-render=height (scene-bump.cpp)", consts: &[LIGHT, HALF, ("TextureStepX", "0.000977"), ("TextureStepY", "0.000977")], fills: &[] },
    Shader { file: "bump-normals.frag", scene: "bump:bump-render=normals (scene-bump.cpp)", consts: &[LIGHT, HALF], fills: &[] },
    Shader { file: "bump-normals-tangent.frag", scene: "bump:bump-render=normals-tangent (scene-bump.cpp)", consts: &[LIGHT, HALF], fills: &[] },
    Shader { file: "bump-poly.frag", scene: "bump:bump-render=high-poly (scene-bump.cpp)", consts: &[LIGHT, HALF], fills: &[] },
    Shader { file: "light-advanced.frag", scene: "shading:shading=blinn-phong-inf (scene-shading.cpp)", consts: &[LIGHT, HALF], fills: &[] },
    Shader { file: "light-basic-tex-bilinear.frag", scene: "texture:texture-filter=linear-shader (scene-texture.cpp)", consts: &[("TextureSize", "vec2(512.000000, 512.000000)")], fills: &[] },
    Shader {
        file: "light-refract.frag",
        scene: "refract (scene-refract.cpp, index=1.2)",
        consts: &[("LightColor", "vec4(0.400000, 0.400000, 0.400000, 1.000000)"), ("LightSourcePosition", "vec4(1.000000, 1.000000, 2.000000, 1.000000)"), ("RefractiveIndex", "1.200000")],
        fills: &[],
    },
    // templates
    Shader { file: "conditionals.vert", scene: "conditionals:vertex-steps=5 (scene-conditionals.cpp)", consts: &[], fills: &[("$MAIN$", Fill::File("conditionals-step-conditional.all", 5))] },
    Shader { file: "conditionals.frag", scene: "conditionals:fragment-steps=5 (scene-conditionals.cpp)", consts: &[], fills: &[("$MAIN$", Fill::File("conditionals-step-conditional.all", 5))] },
    Shader {
        file: "function.vert",
        scene: "function, vertex defaults: vertex-steps=1, low complexity (scene-function.cpp)",
        consts: &[],
        fills: &[("$PROCESS$", Fill::File("function-step-low.all", 1)), ("$MAIN$", Fill::File("function-call.all", 1))],
    },
    Shader {
        file: "function.frag",
        scene: "function:fragment-steps=5:fragment-complexity=low (scene-function.cpp)",
        consts: &[],
        fills: &[("$PROCESS$", Fill::File("function-step-low.all", 1)), ("$MAIN$", Fill::File("function-call.all", 5))],
    },
    Shader { file: "loop.vert", scene: "loop:vertex-steps=5:vertex-uniform=false (scene-loop.cpp)", consts: &[], fills: &[("$MAIN$", Fill::File("loop-step-loop.all", 1)), ("$NLOOPS$", Fill::Text("5"))] },
    Shader { file: "loop.frag", scene: "loop:fragment-steps=5:fragment-uniform=false (scene-loop.cpp)", consts: &[], fills: &[("$MAIN$", Fill::File("loop-step-loop.all", 1)), ("$NLOOPS$", Fill::Text("5"))] },
    Shader {
        file: "light-phong.frag",
        scene: "shading:shading=phong, num-lights=1 (scene-shading.cpp)",
        consts: &[("MaterialDiffuse", "vec4(0.000000, 0.000000, 1.000000, 1.000000)"), ("LightSourcePosition0", "vec4(0.000000, 1.000000, 0.000000, 1.000000)"), ("LightColor0", "vec4(0.800000, 0.800000, 0.800000, 1.000000)")],
        fills: &[("$DO_LIGHTS$", Fill::Text("gl_FragColor = vec4(0.0, 0.0, 0.0, 0.0); gl_FragColor += compute_color(LightSourcePosition0, LightColor0);"))],
    },
    Shader {
        file: "desktop-blur.frag",
        scene: "desktop:effect=blur:blur-radius=5:separable=true, horizontal pass of a 210-pixel window (scene-desktop.cpp)",
        consts: &[("Kernel0", "0.239365"), ("Kernel1", "0.199935"), ("Kernel2", "0.116512"), ("Kernel3", "0.047370"), ("Kernel4", "0.013437"), ("Kernel5", "0.002659"), ("TextureStepX", "0.004762")],
        fills: &[("$CONVOLUTION$", Fill::Generated(desktop_blur))],
    },
    Shader {
        file: "effect-2d-convolution.frag",
        scene: "effect2d:kernel=0,1,0;1,-4,1;0,1,0; normalized (scene-effect-2d.cpp)",
        consts: &[
            ("TextureStepX", "0.001250"),
            ("TextureStepY", "0.001667"),
            ("Kernel0", "0.000000"),
            ("Kernel1", "0.250000"),
            ("Kernel2", "0.000000"),
            ("Kernel3", "0.250000"),
            ("Kernel4", "-1.000000"),
            ("Kernel5", "0.250000"),
            ("Kernel6", "0.000000"),
            ("Kernel7", "0.250000"),
            ("Kernel8", "0.000000"),
        ],
        fills: &[("$CONVOLUTION$", Fill::Generated(convolution_3x3))],
    },
    Shader {
        file: "terrain-blur.frag",
        scene: "terrain, bloom's horizontal blur: radius 2, sigma 4, tilt shift 0 (scene-terrain/blur-renderer.cpp)",
        consts: &[("Kernel0", "0.212609"), ("Kernel1", "0.206068"), ("Kernel2", "0.187627"), ("TiltShift", "0.000000"), ("TextureStepX", "0.001250")],
        fills: &[("$CONVOLUTION$", Fill::Generated(terrain_blur))],
    },
];

/// glmark2's one-dimensional horizontal blur sum over `radius` taps each
/// side, stepping by `step`.
fn horizontal_blur(radius: i32, step: &str) -> String {
    let mut s = String::from("result = ");
    for offset in -radius..=radius {
        s.push_str(&format!("texture2D(Texture0, TextureCoord + vec2({offset}.0 * {step}, 0.0)) * Kernel{} + ", offset.abs()));
    }
    s.push_str("0.0 ;");
    s
}

fn desktop_blur() -> String {
    horizontal_blur(5, "TextureStepX")
}

fn terrain_blur() -> String {
    format!("float stepX = TextureStepX * abs(TiltShift - TextureCoord.y) / abs(1.0 - TiltShift); {}", horizontal_blur(2, "stepX"))
}

/// glmark2's 3×3 convolution: coefficient `i` at (i % 3 − 1, −(i / 3 − 1)).
fn convolution_3x3() -> String {
    let terms: Vec<String> = (0..9i32).map(|i| format!("texture2D(Texture0, TextureCoord + vec2({:.1} * TextureStepX, {:.1} * TextureStepY)) * Kernel{i}", f64::from(i % 3 - 1), f64::from(-(i / 3 - 1)))).collect();
    format!("result = {};", terms.join(" + "))
}

/// The entry for the shader at `path` (by file name).
pub fn entry(path: &str) -> Option<&'static Shader> {
    let name = Path::new(path).file_name()?.to_str()?;
    SHADERS.iter().find(|s| s.file == name)
}

/// A shader as glmark2 hands it to the driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completed {
    /// The text with every placeholder filled (the same lines).
    pub text: String,
    /// The constants glmark2 declares, as (macro, value).
    pub defines: Vec<(String, String)>,
}

/// The shader text with glmark2's additions; `None` when the table has no
/// entry for `path`'s file name.
pub fn additions(path: &str, text: &str) -> Result<Option<Completed>, FrontError> {
    let Some(sh) = entry(path) else { return Ok(None) };
    let mut out = text.to_string();
    // a fill may hold a later placeholder ($NLOOPS$ inside loop-step-loop.all)
    for (name, fill) in sh.fills {
        let Some(at) = out.find(name) else { continue };
        let value = match fill {
            Fill::Text(t) => t.to_string(),
            Fill::Generated(f) => f(),
            Fill::File(file, times) => {
                let p = Path::new(path).with_file_name(file);
                let body = std::fs::read_to_string(&p).map_err(|e| {
                    let (l, c) = line_col(&out, at);
                    FrontError::at(l, c, format!("`{name}`: glmark2 fills it from {file}, which cannot be read beside the shader: {e}"))
                })?;
                let one = one_line(&body).map_err(|m| {
                    let (l, c) = line_col(&out, at);
                    FrontError::at(l, c, format!("`{name}` ({file}): {m}"))
                })?;
                vec![one; *times].join(" ")
            }
        };
        out = out.replace(name, &value);
    }
    if let Some((at, ph)) = placeholder(&out) {
        let (l, c) = line_col(&out, at);
        return Err(FrontError::at(l, c, format!("placeholder `{ph}` has no value in glmark2's table for {}", sh.file)));
    }
    let defines = sh.consts.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Ok(Some(Completed { text: out, defines }))
}

/// The first `$NAME$` placeholder of `text` (upper case, digits, `_`).
pub fn placeholder(text: &str) -> Option<(usize, &str)> {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(k) = text[i..].find('$') {
        let s = i + k;
        let mut e = s + 1;
        while e < b.len() && (b[e].is_ascii_uppercase() || b[e].is_ascii_digit() || b[e] == b'_') {
            e += 1;
        }
        if e > s + 1 && b.get(e) == Some(&b'$') {
            return Some((s, &text[s..=e]));
        }
        i = s + 1;
    }
    None
}

/// A code fragment on one line: `//` comments dropped, lines joined by a
/// space. A preprocessor line or a `/*` comment cannot be joined.
fn one_line(body: &str) -> Result<String, String> {
    let mut parts = Vec::new();
    for l in body.lines() {
        let code = l.split("//").next().unwrap_or("").trim();
        if code.starts_with('#') || code.contains("/*") {
            return Err("a preprocessor line or block comment cannot be joined onto the placeholder's line".into());
        }
        if !code.is_empty() {
            parts.push(code);
        }
    }
    Ok(parts.join(" "))
}

/// The 1-based line and column of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (u32, u32) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |n| before[n + 1..].chars().count()) as u32 + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// glmark2's gaussian weights: 1/sqrt(pi s2) exp(-i^2/s2), s2 = 2 sigma^2.
    fn gauss(radius: usize, sigma: f64) -> Vec<f64> {
        let s2 = 2.0 * sigma.max(1.0) * sigma.max(1.0);
        (0..=radius).map(|i| 1.0 / (std::f64::consts::PI * s2).sqrt() * (-((i * i) as f64) / s2).exp()).collect()
    }

    fn value(file: &str, name: &str) -> f64 {
        let sh = SHADERS.iter().find(|s| s.file == file).expect("entry");
        sh.consts.iter().find(|(k, _)| *k == name).and_then(|(_, v)| v.parse().ok()).expect("a number")
    }

    #[test]
    fn kernels_are_glmark2s_gaussians() {
        for (i, k) in gauss(5, 5.0 / 3.0).iter().enumerate() {
            assert!((value("desktop-blur.frag", &format!("Kernel{i}")) - k).abs() < 1e-6, "desktop Kernel{i}");
        }
        // the terrain blur normalizes by the sum over both sides
        let g = gauss(2, 4.0);
        let sum: f64 = 2.0 * g.iter().sum::<f64>() - g[0];
        for (i, k) in g.iter().enumerate() {
            assert!((value("terrain-blur.frag", &format!("Kernel{i}")) - k / sum).abs() < 1e-6, "terrain Kernel{i}");
        }
        assert!((value("desktop-blur.frag", "TextureStepX") - 1.0 / 210.0).abs() < 1e-6);
    }

    #[test]
    fn the_half_vector_is_normalised_light_plus_z() {
        let l = [20.0f64, 20.0, 10.0];
        let n = (l.iter().map(|x| x * x).sum::<f64>()).sqrt();
        let h = [l[0] / n, l[1] / n, l[2] / n + 1.0];
        let m = (h.iter().map(|x| x * x).sum::<f64>()).sqrt();
        let want = format!("vec3({:.6}, {:.6}, {:.6})", h[0] / m, h[1] / m, h[2] / m);
        assert_eq!(HALF.1, want);
    }

    #[test]
    fn the_generated_sums_are_one_line_glsl() {
        let c = convolution_3x3();
        assert!(c.starts_with("result = texture2D(Texture0, TextureCoord + vec2(-1.0 * TextureStepX, 1.0 * TextureStepY)) * Kernel0 + "), "{c}");
        assert!(c.ends_with("vec2(1.0 * TextureStepX, -1.0 * TextureStepY)) * Kernel8;"), "{c}");
        let d = desktop_blur();
        assert_eq!(d.matches("texture2D").count(), 11);
        assert!(d.contains("vec2(-5.0 * TextureStepX, 0.0)) * Kernel5 + ") && d.ends_with("0.0 ;"));
        assert!(!terrain_blur().contains('\n'));
    }

    #[test]
    fn placeholders_are_found_and_located() {
        assert_eq!(placeholder("a $ b $MAIN$ c"), Some((6, "$MAIN$")));
        assert_eq!(placeholder("cost $5 and $x$"), None);
        assert_eq!(line_col("ab\ncd$X$", 5), (2, 3));
    }

    #[test]
    fn a_missing_fragment_is_a_located_error() {
        let dir = std::env::temp_dir().join(format!("schedra-glmark2-{}", std::process::id()));
        let path = dir.join("conditionals.frag");
        let e = additions(&path.to_string_lossy(), "void main() {\n  $MAIN$\n}").expect_err("no fragment file");
        assert_eq!((e.line, e.col), (2, 3));
        assert!(e.message.contains("conditionals-step-conditional.all"), "{}", e.message);
    }

    #[test]
    fn text_fills_and_unknown_names() {
        let Completed { text: t, defines: defs } = additions("x/light-phong.frag", "void main(void)\n{\n$DO_LIGHTS$\n}").expect("fills").expect("an entry");
        assert_eq!(t.lines().count(), 4);
        assert!(t.contains("compute_color(LightSourcePosition0, LightColor0);"));
        assert!(defs.iter().any(|(k, _)| k == "MaterialDiffuse"));
        assert!(additions("x/mine.frag", "$MAIN$").expect("no error").is_none());
        let e = additions("light-basic.vert", "void main() { $OTHER$ }").expect_err("unfilled");
        assert!(e.message.contains("$OTHER$"), "{}", e.message);
    }

    #[test]
    fn fragments_join_onto_one_line() {
        assert_eq!(one_line("    if (d >= 0.5)\n        d = 1.0; // x\n    else\n        d = 2.0;\n").as_deref(), Ok("if (d >= 0.5) d = 1.0; else d = 2.0;"));
        assert!(one_line("#define X 1\n").is_err());
    }
}
