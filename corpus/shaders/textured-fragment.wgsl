// A textured fragment: the sample is modulated by the interpolated colour
// (for targets with a texture unit).
@group(0) @binding(0) var tex: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;

@fragment
fn main(@location(0) uv: vec2<f32>, @location(1) colour: vec4<f32>) -> @location(0) vec4<f32> {
    return textureSample(tex, smp, uv) * colour;
}
