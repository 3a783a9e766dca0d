// GLSL ES 1.00 in a `.glsl` file: the stage comes from `--stage fragment`.
precision mediump float;
varying vec3 vNormal;
uniform vec3 uLight;
void main()
{
    float i = dot(normalize(vNormal), normalize(uLight));
    float band = i > 0.75 ? 1.0 : (i > 0.25 ? 0.6 : 0.2);
    gl_FragColor = vec4(vec3(band), 1.0);
}
