// Cel shading with a bounded loop: the intensity is quantised into bands by
// an unrolled loop, a condition picks the outline colour, and the result is
// mixed with a fractional stripe.
@fragment
fn main(@location(0) normal: vec3<f32>, @location(1) light: vec3<f32>, @location(2) uv: vec2<f32>) -> @location(0) vec4<f32> {
    let i = clamp(dot(normalize(normal), normalize(light)), 0.0, 1.0);
    var level = 0.0;
    for (var k = 0; k < 4; k++) {
        if (i > f32(k) * 0.25) {
            level = f32(k + 1) * 0.25;
        }
    }
    var c = vec3<f32>(level, level * 0.8, level * 0.6);
    if (i < 0.1) {
        c = vec3<f32>(0.0);
    }
    let stripe = step(0.5, fract(uv.x * 8.0));
    return vec4<f32>(mix(c, c * 0.5, stripe), 1.0);
}
