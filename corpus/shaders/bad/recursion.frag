precision mediump float;
varying float v;
float f(float x);
float f(float x) {
    if (x < 1.0) { return x; }
    return f(x * 0.5);
}
void main() {
    gl_FragColor = vec4(f(v));
}
