@fragment
fn main() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0, 2.0, 3.0;
}
