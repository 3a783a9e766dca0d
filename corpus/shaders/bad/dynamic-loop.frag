uniform float count;
void main()
{
    float s = 0.0;
    for (float i = 0.0; i < count; i += 1.0) {
        s += 0.1;
    }
    gl_FragColor = vec4(s);
}
