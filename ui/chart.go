package ui

import (
	"fmt"
	"math"
)

type chartPoint struct {
	Label        string
	Tokens, Cost float64
}

// chart is an SVG bar chart of tokens per iteration with the cost per
// iteration as a line over it, laid out here so the template writes
// numbers only.
type chart struct {
	W, H             int
	Bars             []chartBar
	Line             string // the cost line's points, "x,y x,y"
	Dots             []chartDot
	MaxTokens        string
	MaxCost          string
	BaseY, Left, Top int
	Right            int
}

type chartBar struct {
	X, Y, W, H float64
	Label      string
	LabelX     float64
	Title      string
}

type chartDot struct{ X, Y float64 }

const (
	chartW, chartH = 720, 240
	chartLeft      = 56
	chartRight     = 56
	chartTop       = 16
	chartBottom    = 28
)

// drawChart lays out points; nil when there is nothing to draw.
func drawChart(points []chartPoint) *chart {
	if len(points) == 0 {
		return nil
	}
	maxT, maxC := 0.0, 0.0
	for _, p := range points {
		maxT = math.Max(maxT, p.Tokens)
		maxC = math.Max(maxC, p.Cost)
	}
	c := &chart{W: chartW, H: chartH, BaseY: chartH - chartBottom, Left: chartLeft, Top: chartTop, Right: chartW - chartRight,
		MaxTokens: fmt.Sprintf("%.0f tokens", maxT), MaxCost: fmt.Sprintf("$%.4g", maxC)}
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	step := plotW / float64(len(points))
	barW := math.Max(1, step*0.7)
	for i, p := range points {
		x := float64(chartLeft) + step*float64(i) + (step-barW)/2
		h := 0.0
		if maxT > 0 {
			h = plotH * p.Tokens / maxT
		}
		b := chartBar{X: round1(x), Y: round1(float64(c.BaseY) - h), W: round1(barW), H: round1(h), LabelX: round1(x + barW/2),
			Title: fmt.Sprintf("iteration %s: %.0f tokens, $%g", p.Label, p.Tokens, p.Cost)}
		if len(points) <= 30 || i%(len(points)/30+1) == 0 {
			b.Label = p.Label
		}
		c.Bars = append(c.Bars, b)
		if maxC > 0 {
			d := chartDot{X: round1(x + barW/2), Y: round1(float64(c.BaseY) - plotH*p.Cost/maxC)}
			c.Dots = append(c.Dots, d)
			if c.Line != "" {
				c.Line += " "
			}
			c.Line += fmt.Sprintf("%g,%g", d.X, d.Y)
		}
	}
	return c
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
