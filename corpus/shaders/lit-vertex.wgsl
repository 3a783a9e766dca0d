// A lit, animated vertex shader: model-view-projection transform, a sine
// wobble along y, and a diffuse + specular term passed on as a colour.
struct Uniforms {
    mvp: mat4x4<f32>,
    light: vec3<f32>,
    time: f32,
    shininess: f32,
};
@group(0) @binding(0) var<uniform> u: Uniforms;

struct Out {
    @builtin(position) pos: vec4<f32>,
    @location(0) colour: vec4<f32>,
};

fn wobble(p: vec3<f32>, t: f32) -> vec3<f32> {
    return p + vec3<f32>(0.0, 0.1 * sin(t + p.x * 2.0), 0.0);
}

@vertex
fn main(@location(0) position: vec3<f32>, @location(1) normal: vec3<f32>) -> Out {
    var o: Out;
    let p = wobble(position, u.time);
    o.pos = u.mvp * vec4<f32>(p, 1.0);
    let n = normalize(normal);
    let l = normalize(u.light - p);
    let diffuse = max(dot(n, l), 0.0);
    let h = normalize(l + vec3<f32>(0.0, 0.0, 1.0));
    let spec = pow(max(dot(n, h), 0.0001), u.shininess);
    o.colour = vec4<f32>(vec3<f32>(diffuse) + spec, 1.0);
    return o;
}
