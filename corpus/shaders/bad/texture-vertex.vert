attribute vec2 uv;
uniform sampler2D height;
void main()
{
    gl_Position = vec4(uv, texture2DLod(height, uv, 0.0).x, 1.0);
}
