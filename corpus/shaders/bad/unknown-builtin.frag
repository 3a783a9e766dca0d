varying vec2 uv;
void main()
{
    gl_FragColor = vec4(frobnicate(uv.x), 0.0, 0.0, 1.0);
}
