varying float a;
void main()
{
    if (a < 0.5)
        discard;
    gl_FragColor = vec4(a);
}
